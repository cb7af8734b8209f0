"""What could hurt a person if an agent missed it: an allergy, a condition, a diet they
keep, a need for access. Of a person's facts, those go first (`active.render`), whatever
the prompt's words: "anything to know before dinner with Tomasz?" shares no word with
"Tomasz is allergic to shellfish", and a block cut to its budget should lose his job
title before it loses that.
"""

from __future__ import annotations

import re

_CAUTION = re.compile(
    r"\b(?:allerg\w*|anaphyla\w*|epi-?pens?|coeliac|celiac|gluten|lactose|intoleran\w*|diabet\w*|insulin|"
    r"asthma\w*|inhaler|epilep\w*|seizures?|vegan|vegetarian|halal|kosher|pregnan\w*|wheelchair|"
    r"hearing aids?|deaf|medication|medicine)\b", re.I)


def cautions(text: str) -> bool:
    """`text` states something that could hurt someone if missed."""
    return bool(_CAUTION.search(text or ""))
