"""A public long-conversation benchmark as a corpus: one markdown file per dialogue turn.

    from tests.benchmarks.quality.locomo import load
    questions = load(src_dir, root)   # writes the turns under root, returns the questions

`src_dir` holds the benchmark's conversation files (JSON, one per conversation: the
LoCoMo release of the snap-research/locomo repository, `data/locomo10.json` split per
conversation, or its `locomo10_v2/*.json`). Nothing of it is kept in this project: the
corpus is written where the caller says, and the data stays where it was.

Each turn becomes `<conv>/session-NN/<dia_id>.md`, written as a chat export writes a
message (the format issue 28 was measured on): frontmatter `title: "<speaker> — <time>"`
and `date:` (the session's day), then `**<speaker>** — <time>`, then the text, with the
photo the turn shares as `[shares <caption>]`. `<time>` is the session's own
`session_N_date_time` ("4:10 pm on 2 March, 2024"). All conversations go into ONE corpus.

With `layout="session"` each session is one file instead, `<conv>/session-NN.md`, as a
chat log kept one file per conversation reads: a `# <speakers> — <time>` heading, then each
turn as a paragraph `**<speaker>:** <text>`. A question's evidence is then its sessions.

Questions: every `qa` item except category 5 (adversarial: the answer is not in the
conversation), as `{text, relevant (paths of its evidence dia_ids), answer, category}`.
A file is rewritten only when its bytes change, so a kept corpus is rebuilt cheaply.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DIA = re.compile(r"D(\d+):(\d+)")


def session_day(stamp: str) -> str:
    """"4:10 pm on 2 March, 2024" -> "2024-03-02" ("" when it does not parse)."""
    m = re.search(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", stamp or "")
    if not m:
        return ""
    try:
        return dt.datetime.strptime(f"{m.group(1)} {m.group(2)[:3]} {m.group(3)}", "%d %b %Y").date().isoformat()
    except ValueError:
        return ""


def turn_path(conv: str, dia_id: str) -> str | None:
    m = _DIA.fullmatch(dia_id.strip())
    if not m:
        return None
    return f"{conv}/session-{int(m.group(1)):02d}/D{m.group(1)}-{m.group(2)}.md"


def _yaml(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def turn_text(speaker: str, stamp: str, day: str, text: str, caption: str = "") -> str:
    body = " ".join(str(text or "").split())
    if caption:
        body = f"{body} [shares {' '.join(caption.split())}]".strip()
    head = f"---\ntitle: {_yaml(f'{speaker} — {stamp}')}\n" + (f"date: {day}\n" if day else "") + "---\n"
    return f"{head}**{speaker}** — {stamp}\n\n{body}\n"


def _write(f: Path, text: str) -> None:
    if f.exists() and f.read_text("utf-8") == text:
        return
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text, "utf-8")


def load(src: Path, root: Path, layout: str = "turn") -> list[dict[str, Any]]:
    if layout not in ("turn", "session"):
        raise SystemExit(f"layout {layout!r}: turn or session")
    files = sorted(Path(src).glob("*.json"))
    if not files:
        raise SystemExit(f"--locomo {src}: no .json conversation files there")
    questions: list[dict[str, Any]] = []
    for f in files:
        data = json.loads(f.read_text("utf-8"))
        convs = data if isinstance(data, list) else [data]
        for i, d in enumerate(convs):
            name = f.stem if len(convs) == 1 else str(d.get("sample_id") or f"{f.stem}-{i}")
            conv = "conv-" + re.sub(r"[^\w.-]+", "-", name)
            questions += _conversation(d.get("conversation", d), d.get("qa", []), conv, root, layout)
    return questions


def session_text(speakers: list[str], stamp: str, day: str, turns: list[tuple[str, str]]) -> str:
    title = f"{' and '.join(speakers)} — {stamp}"
    head = f"---\ntitle: {_yaml(title)}\n" + (f"date: {day}\n" if day else "") + "---\n"
    return head + f"# {title}\n\n" + "".join(f"**{who}:** {text}\n\n" for who, text in turns)


def _conversation(c: dict[str, Any], qa: list[dict[str, Any]], conv: str, root: Path,
                  layout: str = "turn") -> list[dict[str, Any]]:
    have: set[str] = set()
    where: dict[str, str] = {}  # a turn's path -> the file it is in
    for key, turns in c.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if not m or not isinstance(turns, list):
            continue
        stamp = str(c.get(f"{key}_date_time") or "")
        day = session_day(stamp)
        said: list[tuple[str, str]] = []
        for t in turns:
            rel = turn_path(conv, str(t.get("dia_id", "")))
            if rel is None:
                continue
            have.add(rel)
            who, text, caption = str(t.get("speaker", "")), t.get("text", ""), str(t.get("blip_caption") or "")
            if layout == "turn":
                where[rel] = rel
                _write(root / rel, turn_text(who, stamp, day, text, caption))
            else:
                where[rel] = f"{conv}/session-{int(m.group(1)):02d}.md"
                body = " ".join(str(text or "").split())
                said.append((who, f"{body} [shares {' '.join(caption.split())}]".strip() if caption else body))
        if said:
            speakers = list(dict.fromkeys(w for w, _ in said))
            _write(root / f"{conv}/session-{int(m.group(1)):02d}.md", session_text(speakers, stamp, day, said))
    out = []
    for q in qa:
        cat = int(q.get("category") or 0)
        if cat == 5 or "answer" not in q:
            continue
        ids = _DIA.findall(" ".join(map(str, q.get("evidence") or [])))
        rel = [where[p] for p in (turn_path(conv, f"D{a}:{b}") for a, b in ids) if p in have]
        out.append({"text": str(q["question"]), "relevant": list(dict.fromkeys(rel)),
                    "answer": str(q["answer"]), "forbidden": [], "category": CATEGORIES.get(cat, str(cat))})
    return out
