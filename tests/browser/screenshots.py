"""Screenshots of the built wiki for a person to review: home, a page, search, graph and
the 404 page, on a desktop and a phone, light and dark.

    python tests/browser/screenshots.py [--out DIR] [--site SITE]

Builds the project's docs (plus the browser tests' long and wide pages) unless --site
names a built site, opens it from file:// in Debian's Chromium, and writes
DIR/<view>-<device>-<theme>.png (default DIR: ./screenshots).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browserkit import DESKTOP, PHONE, build_site, launch, make_corpus, why_no_browser  # noqa: E402

VIEWS = {
    "home": ("index.html", None),
    "page": ("concepts/hybrid-search/index.html", None),
    "search": ("concepts/hybrid-search/index.html", "hybrid rank"),
    "graph": ("_/graph/index.html", None),
    "notfound": ("404.html", None),
}


def shoot(site: Path, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as pw:
        browser = launch(pw)
        for device, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            for theme in ("light", "dark"):
                context = browser.new_context(viewport=viewport, is_mobile=device == "phone",
                                              has_touch=device == "phone", color_scheme=theme)
                page = context.new_page()
                for name, (rel, query) in VIEWS.items():
                    page.goto((site / rel).as_uri())
                    if query:
                        page.keyboard.press("/")
                        page.keyboard.type(query)
                        page.locator(".search-results li").first.wait_for(timeout=10000)
                    if name == "graph":
                        page.locator('#graph[data-settled="true"]').wait_for(timeout=30000)
                        page.wait_for_timeout(700)
                    else:
                        page.wait_for_timeout(150)
                    path = out / f"{name}-{device}-{theme}.png"
                    page.screenshot(path=str(path))
                    written.append(path)
                context.close()
        browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("screenshots"))
    ap.add_argument("--site", type=Path, help="a built site (default: build the docs now)")
    args = ap.parse_args(argv)
    reason = why_no_browser()
    if reason:
        print(f"cannot take screenshots: {reason}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build_site(make_corpus(Path(tmp) / "corpus"), Path(tmp) / "site")
        for path in shoot(site.resolve(), args.out):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
