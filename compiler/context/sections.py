"""Wake sections as facts: a page's text turned into the lines a wake block shows.

A section is a heading naming the page and its path (so an agent can `get` the rest),
then the page's units: prose lines as written (markup and bookkeeping out), sub-headings
as short labels, claims as `- statement (date, path)`. Frontmatter, marker comments, claim
ids, Timeline and Evidence lists never appear.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .facts import Page, page_units
from .pack import fact_line, key_of


@dataclass
class Section:
    name: str  # core name, "core", "project", "linked", "decision", "daily", "privacy_boundaries"
    paths: list[str]
    heading: str
    lines: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # one per line ("" for labels)

    def text(self, lines: list[str] | None = None) -> str:
        body = self.lines if lines is None else lines
        return "\n".join([self.heading, *body]) if self.heading else "\n".join(body)


def page_section(name: str, path: str, text: str, limit: int | None = None, claims_first: bool = False,
                 label: str = "") -> Section | None:
    page: Page = page_units(path, text)
    units = page.units
    if claims_first:
        units = [u for u in units if u.kind == "claim"] + [u for u in units if u.kind != "claim"]
    title = page.title or path
    heading = f"## {label}{title} ({path})"
    sec = Section(name, [path], heading)
    last_heading = page.title
    for u in units:
        if limit is not None and len([k for k in sec.keys if k]) >= limit:
            break
        if u.kind == "claim":
            sec.lines.append(f"- {fact_line(u.text, u.date, path)}")
            sec.keys.append(key_of(u.text))
            continue
        if not claims_first and u.heading and u.heading != last_heading and u.heading.casefold() != "claims":
            sec.lines.append(f"{u.heading}:")
            sec.keys.append("")
            last_heading = u.heading
        sec.lines.append(u.text)
        sec.keys.append(key_of(u.text))
    while sec.lines and sec.lines[-1].endswith(":") and not sec.keys[-1]:
        sec.lines.pop()
        sec.keys.pop()
    if not sec.lines:
        return None
    return sec


def plain_section(name: str, paths: list[str], heading: str, lines: list[str]) -> Section | None:
    if not lines:
        return None
    return Section(name, paths, heading, list(lines), [key_of(x) for x in lines])
