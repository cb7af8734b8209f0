"""Jinja2 templates and static assets for the built site (shipped in the wheel)."""

from pathlib import Path

TEMPLATE_DIR = Path(__file__).resolve().parent
STATIC_DIR = TEMPLATE_DIR / "static"
