"""`commonplace lint`: problems a person should fix in the corpus.

Broken and ambiguous links, self-links, malformed frontmatter and unreadable files,
missing titles, and duplicate titles or aliases that make links ambiguous.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .build import Corpus


@dataclass(frozen=True)
class Finding:
    code: str  # broken-link | ambiguous-link | self-link | frontmatter | skipped | missing-title | duplicate-name | ...
    path: str
    message: str
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "path": self.path, "line": self.line, "message": self.message}

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: [{self.code}] {self.message}"


def lint(corpus: Corpus) -> list[Finding]:
    findings: list[Finding] = []
    for w in corpus.warnings:
        findings.append(Finding(w.code, w.path, w.message, w.line))
    for d in corpus.docs:
        for link in d.links:
            shown = link.target or f"#{link.heading}"
            if link.candidates:
                findings.append(Finding(
                    "ambiguous-link", d.path,
                    f"[[{shown}]] matches several pages: {', '.join(link.candidates)}", link.line))
            elif link.broken:
                findings.append(Finding("broken-link", d.path, f"link to {shown!r} matches no page", link.line))
            elif link.resolved == d.path and link.target:
                findings.append(Finding("self-link", d.path, f"link to {shown!r} points at the page itself", link.line))
        if not d.title_from_frontmatter and not any(level == 1 for level, _, _ in d.headings):
            findings.append(Finding("missing-title", d.path, f"no `title` and no `# ` heading; using {d.title!r}"))
    for name, paths in sorted(corpus.resolver.names.items()):
        unique = sorted(set(paths))
        if len(unique) > 1:
            findings.append(Finding(
                "duplicate-name", unique[0],
                f"title or alias {name!r} is shared by {', '.join(unique)}; links to it are ambiguous"))
    findings.sort(key=lambda f: (f.path, f.line or 0, f.code, f.message))
    return findings
