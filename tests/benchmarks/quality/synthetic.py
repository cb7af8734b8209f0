"""Labelled questions over the synthetic corpus of `corpus_gen` (a mostly lexical case).

    questions = generate(root, n=300, seed=0)

Questions are derived from the generated text, each labelled with the documents that
hold the fact (only facts that occur in exactly one document are used):

- `title`: a page asked for by its subject, reworded ("who is Ada Silva", "what is the
  current status of the Iris Rewrite project", "why did we decide to ...");
- `fact`: a sentence's event asked about with its date reworded ("what happened when
  `openapi.yaml` was deprecated in July 2024?") or its number ("which ... takes about 75
  hours of toil a week?").
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path

from ..corpus_gen import generate as generate_corpus
from .dialogue import Question

_TITLE = re.compile(r'^title: "?(.*?)"?$', re.MULTILINE)
_EVENT = re.compile(r"We ([a-z]+) `([^`]+)` on (\d{4}-\d{2}-\d{2}) and nothing ([a-z]+) happened")
_TOIL = re.compile(r"The ([a-zA-Z][a-zA-Z -]*?) costs roughly (\d+) hours a week of toil")


def _title(text: str) -> str | None:
    m = _TITLE.search(text)
    return m.group(1) if m else None


def generate(root: Path, n: int = 300, seed: int = 0, per_kind: int = 40) -> list[Question]:
    paths = generate_corpus(root, n, seed=seed)
    texts = {p: (root / p).read_text(encoding="utf-8") for p in paths}
    rng = random.Random(seed + 17)
    titles: list[Question] = []
    for p in paths:
        t = _title(texts[p])
        if not t:
            continue
        if p.startswith("people/"):
            q = rng.choice([f"who is {t} and what does {t.split()[0]} work on",
                            f"tell me about {t}, their role and preferences"])
        elif p.endswith("/state.md"):
            q = rng.choice([f"what is the current status of the {t} project",
                            f"where do things stand with {t} right now"])
        elif p.startswith("decisions/"):
            words = t.split(":", 1)[-1].strip().lower()
            q = rng.choice([f"why did we decide to {words}", f"what was the reasoning behind the choice to {words}"])
        elif p.startswith("concepts/"):
            q = rng.choice([f"explain the idea of {t.lower()}", f"what do our notes say {t.lower()} means"])
        else:
            continue
        titles.append(Question("title", q, [p], "synthetic"))
    facts: list[Question] = []
    counts: dict[str, int] = {}
    found: list[tuple[str, re.Match]] = []
    for p in paths:
        for rx in (_EVENT, _TOIL):
            for m in rx.finditer(texts[p]):
                counts[m.group(0)] = counts.get(m.group(0), 0) + 1
                found.append((p, m))
    for p, m in found:
        if counts[m.group(0)] != 1:
            continue
        if m.re is _EVENT:
            verb, ident, date = m.group(1), m.group(2), dt.date.fromisoformat(m.group(3))
            q = f"what happened when {ident} was {verb} in {date.strftime('%B %Y')}"
        else:
            q = f"which {m.group(1).lower()} takes about {m.group(2)} hours of toil every week"
        facts.append(Question("fact", q, [p], "synthetic"))
    rng.shuffle(titles)
    rng.shuffle(facts)
    return titles[:per_kind] + facts[:per_kind]
