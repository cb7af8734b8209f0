"""Token counting without a tokenizer: `max(ceil(characters / 4), ceil(words * 4 / 3))`.

Four characters a token is the usual figure for English under BPE tokenizers; the word
term keeps short-word and non-English text from being undercounted. Both overestimate
plain English slightly, the safe direction for a budget.
"""

from __future__ import annotations

import math
import re

_WORDS = re.compile(r"\S+")


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    words = len(_WORDS.findall(text))
    return max(math.ceil(len(text) / 4), math.ceil(words * 4 / 3))
