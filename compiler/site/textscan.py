"""The compiled text scanner (compiler/site/_textscan.c), where the install could build it.

It does the site search's per-page text work (the page's text by section, its excerpt,
its terms, its sections as JSON) in one C pass: about 4x faster than the Python
that defines it (render.text_sections, site_search_terms), which runs where there is no
compiler and wherever the C code answers None (text it does not cover). Both give the
same strings (tests/test_textscan.py). See docs/decisions/2026-11-24-compiled-text-scan.md.
"""

from __future__ import annotations

from typing import Callable

try:
    from . import _textscan
except ImportError:  # installed without a C compiler: the Python definitions do it all
    _textscan = None

AVAILABLE = _textscan is not None

fold: Callable[[str], str | None] | None = _textscan.fold if _textscan else None
terms: Callable[[str], str | None] | None = _textscan.terms if _textscan else None
page: Callable[[str], tuple[str, str, str] | None] | None = _textscan.page if _textscan else None
