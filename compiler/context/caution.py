"""What could hurt a person if an agent missed it: an allergy, a condition, a diet they
keep, a need for access. Of a person's facts, those go first (`active.render`), whatever
the prompt's words: "anything to know before dinner with Tomasz?" shares no word with
"Tomasz is allergic to shellfish", and a block cut to its budget should lose his job
title before it loses that. A prompt about food brings every candidate person's such
facts up, named, whoever the prompt names (`about_food`).
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


_FOOD = re.compile(
    r"\b(?:lunch\w*|dinners?|breakfasts?|brunch|meals?|snacks?|eat|eats|eating|food|menus?|restaurants?|"
    r"cook\w*|recipes?|bak(?:e|es|ing)|cakes?|picnics?|takeaway|cater\w*|dishes|drinks|"
    r"diet\w*|allerg\w*|intoleran\w*|dine|dining)\b", re.I)


def about_food(prompt: str) -> bool:
    """The prompt is about what someone will eat: everyone's allergy or diet among the
    candidates bears on it ("what can I put in the kids' lunchboxes?" names none of them)."""
    return bool(_FOOD.search(prompt or ""))
