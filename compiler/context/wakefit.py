"""How a wake block shares its budget among its sections, and how a section is cut.

When the budget cannot hold every section whole, room goes by priority (highest first):

1. `RULES`: the profile's core sections, the agent's own preferences, pinned core pages
   (the working agreements: "never push to main" is a rule for every task);
2. `PROJECT`: the project asked for;
3. `TODAY`: today's daily note;
4. `DECISION`: the pinned decisions;
5. `YESTERDAY`: yesterday's daily note;
6. `LINKED`: the pages the project links to (its people, its decisions);
7. `OTHER`: the other core pages (`default` and `casual`).

Room is handed out in three rounds, each in that order: (1) the first fact of the
project asked for (what the agent starts on: at 100 tokens it still shows), the rules
whole (together within `RULES_SHARE` of the budget: a rule list is not cut for a lower
section), and the first fact of each section of ranks 3 to 5, so each keeps at least
its first line;
(2) each other section's floor (`FLOOR_FACTS`): the project's first three facts, a daily
note's or a decision's first two, a linked or other page's first one, whole or not at
all (a low-priority page is never a stub of words: "Lives in Buenos Aires…"); (3) the
rest, each section up to its cap (`cap`), then past it with what no section took. The
sections are then shown in the block's usual order, each within the room it got. The
room for the recent sessions is set aside before all of this (`wake.py`).

A cut section ends with a note naming the call that reads the rest (`note`). A section
cut to nothing but labels ("Thursday 2026-12-03:") is not shown: it is listed as omitted.
"""

from __future__ import annotations

from .sections import Section
from .tokens import estimate_tokens

RULES, PROJECT, TODAY, DECISION, YESTERDAY, LINKED, OTHER = range(7)
FLOOR_FACTS = {PROJECT: 3, TODAY: 2, DECISION: 2, YESTERDAY: 2, LINKED: 1, OTHER: 1}
RULES_SHARE = 0.5  # the rules' floors together, of the budget: the project and notes keep room
MIN_CUT_TOKENS = 24  # less room than this: leave a section out rather than show a stub
NEWER = "  - newer: "  # a session line under the project fact it changes (`wake._beside_sessions`)
# A section's cap, as a share of the budget (a profile's own caps go first: `cap`). The
# rules may take half the budget each: a cap of a third cut the working agreements after
# their third item while the people pages below them kept their first lines.
SHARE = {"project": 0.4, "linked": 0.12, "decision": 0.15, "daily": 0.15, "core": 0.3}
RULE_SHARE = 0.5
NAMED_CORE = ("active", "defaults", "env", "identity", "soul", "user")

Pairs = list[tuple[str, str]]  # a section's lines to show, each with its key ("" for labels and updates)


def note(paths: list[str], transport: str | None = None) -> str:
    """Where the rest of a cut section is, in the caller's terms when they are known: an
    MCP agent calls the `dory_get` tool, an HTTP client `GET /v1/get`; else the op's name."""
    where = paths[0] if paths else "the source"
    how = {"mcp": f"dory_get path={where}", "http": f"GET /v1/get?path={where}"}.get(transport or "",
                                                                                   f"get path={where}")
    return f"[wake excerpt truncated; {how} for the rest]"


def cap(sec: Section, rank: int, profile_caps: dict[str, int], budget: int) -> int:
    share = RULE_SHARE if rank == RULES and sec.name not in profile_caps else SHARE.get(sec.name, 0.35)
    most = max(MIN_CUT_TOKENS * 2, int(budget * share))
    if sec.name in profile_caps:
        most = profile_caps[sec.name] if sec.name in NAMED_CORE else min(most, profile_caps[sec.name])
    return most


def visible(sec: Section, seen: set[str]) -> Pairs:
    """The section's lines not shown in an earlier section, trailing labels left out."""
    pairs = [(ln, k) for ln, k in zip(sec.lines, sec.keys) if not k or k not in seen]
    return _trim(pairs)


def _is_label(pair: tuple[str, str]) -> bool:
    return not pair[1] and not pair[0].startswith(NEWER)


def _trim(pairs: Pairs) -> Pairs:
    while pairs and _is_label(pairs[-1]):
        pairs = pairs[:-1]
    return pairs


def upto(pairs: Pairs, facts: int | None) -> Pairs:
    """The lines up to and with the `facts`-th fact (an update under it stays with it)."""
    if facts is None:
        return pairs
    count = 0
    for i, pair in enumerate(pairs):
        if pair[1]:
            if count == facts:
                return _trim(pairs[:i])
            count += 1
    return pairs


def shown_cost(sec: Section, pairs: Pairs, facts: int | None, transport: str | None) -> int:
    """Tokens of the section cut after its `facts`-th fact (whole with None), its
    truncation note and the blank line before it."""
    part = upto(pairs, facts)
    text = sec.text([ln for ln, _ in part])
    if len(part) < len(pairs):
        text += "\n" + note(sec.paths, transport)
    return estimate_tokens(text) + 1


def allot(parts: list[tuple[Section, int, Pairs, int]], room: int, budget: int,
          transport: str | None = None) -> list[int]:
    """Tokens for each of `parts` (section, rank, lines to show, cap), in their order,
    by the three rounds of the module's docstring; together never more than `room`."""
    grant = [0] * len(parts)
    left = room
    order = sorted(range(len(parts)), key=lambda i: (parts[i][1], i))
    whole = [shown_cost(s, p, None, transport) for s, _, p, _ in parts]
    first = [min(w, shown_cost(s, p, 1, transport)) for w, (s, _, p, _) in zip(whole, parts)]

    def ask(i: int, target: int, capped: bool = True) -> None:
        nonlocal left
        sec, rank, pairs, most = parts[i]
        if not pairs:
            return
        want = (min(target, max(most, first[i])) if capped else target) - grant[i]  # a cap never takes the first fact
        more = min(want, left)
        least = min(MIN_CUT_TOKENS, whole[i]) if rank <= YESTERDAY else first[i]  # below it: a stub of words
        if more <= 0 or grant[i] + more < least:
            return
        grant[i] += more
        left -= more

    for i in order:  # the project asked for is what the agent starts on: its first fact first
        if parts[i][1] == PROJECT:
            ask(i, first[i])
    rules_room = int(budget * RULES_SHARE)
    for i in order:
        rank, before = parts[i][1], grant[i]
        if rank == RULES:
            ask(i, min(whole[i], before + max(0, rules_room)))
            rules_room -= grant[i] - before
        elif rank <= YESTERDAY:
            ask(i, first[i])  # (the project's is granted already: asking again adds nothing)
    for i in order:
        sec, rank, pairs, _ = parts[i]
        if rank != RULES:
            ask(i, shown_cost(sec, pairs, FLOOR_FACTS[rank], transport))
    for i in order:
        ask(i, whole[i])
    for i in order:  # caps share the room out; what no section took is not wasted
        ask(i, whole[i], capped=False)
    return grant


def fit(sec: Section, pairs: Pairs, room: int, stub: bool = True,
        transport: str | None = None) -> tuple[str, bool]:
    """The section's `pairs` within `room` tokens: (text, truncated). Cut at a line, never
    between a fact and the update under it, nor after a label; with nothing but labels
    left, the first fact cut to its words (`stub`), else nothing."""
    if not pairs:
        return "", False
    lines = [ln for ln, _ in pairs]
    whole = sec.text(lines)
    if estimate_tokens(whole) <= room:
        return whole, False
    if room < MIN_CUT_TOKENS:
        return "", True
    hint = note(sec.paths, transport)
    lo, hi = 0, len(lines)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(sec.text(lines[:mid]) + "\n" + hint) <= room:
            lo = mid
        else:
            hi = mid - 1
    while 0 < lo < len(lines) and lines[lo].startswith(NEWER):
        lo -= 1  # a fact whose update is cut off would read as current: neither is shown
    kept = _trim(pairs[:lo])
    if any(k for _, k in kept):
        return sec.text([ln for ln, _ in kept]) + "\n" + hint, True
    if not stub:
        return "", True
    # the first fact cut short; when an update goes under it, the update (what holds now)
    at = next((i for i, p in enumerate(pairs) if p[1]), None)
    if at is None:
        return "", True
    after = pairs[at + 1][0] if at + 1 < len(pairs) else ""
    words = (after if after.startswith(NEWER) else pairs[at][0]).strip().split(" ")
    head = sec.text([]) + "\n"
    lo2, hi2 = 0, len(words)
    while lo2 < hi2:
        mid = (lo2 + hi2 + 1) // 2
        if estimate_tokens(head + " ".join(words[:mid]) + "…\n" + hint) <= room:
            lo2 = mid
        else:
            hi2 = mid - 1
    if lo2 < 3:
        return "", True
    return head + " ".join(words[:lo2]) + "…\n" + hint, True
