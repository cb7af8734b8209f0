"""Session lines beside the daily notes a prompt about recent work reads whole ("What did
I do yesterday?"): the note of 3 December says the dinner is on Saturday, today's session
moved it to Friday, and the agent should read both, dated, not the Saturday alone. The
notes are found by their date, not by the prompt's words, so `attach_updates` (which
asks a shared word of the prompt) never compares them with the sessions.
"""

from __future__ import annotations

from .evidence import STOP, Evidence, _bearing, _said, stem, unit_stems, updates, words

SHARED = 3  # words (a date counts two) a session line shares with the note's fact, at least


def beside_notes(notes: list[Evidence], sessions: list[Evidence]) -> None:
    """Each session line goes under the note (not newer than it) whose one fact it
    changes and shares the most with, if any (`updates`: same subject, value changed)."""
    for s in sessions:
        sw = {stem(w) for w in words(s.text) if w not in STOP and len(w) > 2}
        sv = _said(s.text)
        best, most = None, SHARED - 1
        for d in notes:
            if d.date and s.date and s.date < d.date:
                continue
            for u in d.units:
                shared = len(sw & unit_stems(u)) + 2 * len(sv & _said(u.text))
                if shared > most and updates(d.path, u.text, s.path, _bearing(s, unit_stems(u)).text, notes):
                    best, most = (d, u), shared
        if best is not None:
            d, u = best
            d.updates.append(_bearing(s, unit_stems(u)))
