"""Content checks: what a write may not carry.

`scan_content` finds invisible or bidirectional-control characters (outside the emoji
sequences and scripts that need joiners), control characters, runs of variation
selectors, and prompt-injection markers (on the text and on its compatibility folding).
`reveal` shows refused characters as `<U+XXXX>` for messages and quarantined copies.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

# Invisible or direction-changing characters: zero-width spaces/joiners, bidi embeddings,
# overrides and isolates, word joiner and invisible operators, BOM, Mongolian vowel
# separator, soft hyphen, interlinear annotations, and Unicode tag characters.
# Together with the joiners and variation selectors below (allowed only where a reader
# sees what they do), this is every Default_Ignorable_Code_Point of Unicode (combining
# grapheme joiner, Khmer inherent vowels, Mongolian selectors, reserved U+2065 and
# U+FFF0-FFF8, shorthand format controls, the whole tag and variation plane U+E0000-E0FFF)
# and the invisible format characters (category Cf: Egyptian hieroglyph format controls).
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufeff\ufff0-\ufff8\ufff9-\ufffb\uffa0\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e00ff\U000e01f0-\U000e0fff]"
)
# Variation selectors: visible in effect only after an emoji or symbol, a keycap base, a
# CJK ideograph (U+E0100-E01EF) or a Mongolian letter (U+180B-180F); elsewhere (after each
# Latin letter) they are a way to hide a message.
_SELECTOR = re.compile("[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_BRAILLE_BLANK = "\u2800"  # looks like a space; fine inside Braille, hiding anywhere else
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# C0/C1 controls other than tab, newline and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_ZWJ = "\u200d"
_JOINERS = ("\u200c", "\u200d")  # legitimate inside emoji sequences and some scripts
_VS_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")

# Markers of text written to steer a model that later reads the corpus. Deliberately
# specific: ordinary prose ("we ignored the previous estimate") must pass.
INJECTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx, re.IGNORECASE))
    for name, rx in (
        ("ignore-instructions",
         r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
         r"(?:previous|prior|above|earlier|preceding|system|original|existing)\s+"
         r"(?:instructions?|prompts?|directions|rules|guidelines|context|messages?)\b"),
        ("new-instructions", r"\b(?:new|updated|real|actual)\s+system\s+(?:prompt|instructions?)\s*:"),
        ("reveal-prompt", r"\b(?:reveal|print|show|repeat|output|leak)\s+(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions)\b"),
        ("role-override", r"\byou\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken|an?\s+unrestricted)\b"),
        ("chat-template", r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\|>"),
        ("chat-template", r"\[/?INST\]|<</?SYS>>"),
        ("system-tag", r"<\s*/?\s*(?:system|system[-_]prompt|sys)\s*>"),
        ("tool-call", r"<\s*/?\s*(?:function_calls|tool_call|antml:[a-z_]+)\b"),
    )
)


@dataclass
class Finding:
    code: str  # invisible-character | bidi-control | control-character | prompt-injection
    message: str
    line: int

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "line": self.line}


_EMPHASIS = re.compile(r"[*_~`]+")
_TAG = re.compile(r"</?[A-Za-z][^<>\n]{0,60}>")
_SPACES = re.compile(r"\s+")


def for_matching(text: str) -> str:
    """The text as a reader takes it in, for the injection markers: invisible characters
    and joiners dropped, markdown emphasis and inline HTML tags removed (`ignore *previous*
    instructions`, `ignore <b>previous</b> ...`), runs of whitespace made one space."""
    text = _INVISIBLE.sub("", text)
    text = _SELECTOR.sub("", text).replace("\u200c", "").replace("\u200d", "").replace(_BRAILLE_BLANK, " ")
    text = _CONTROL.sub("", text)
    text = _TAG.sub(" ", text)
    text = _EMPHASIS.sub("", text)
    return _SPACES.sub(" ", text)


def _selector_base(selector: str, before: str) -> bool:
    """`before` is a character `selector` may follow visibly."""
    if not before:
        return False
    cp = ord(before)
    if "\u180b" <= selector <= "\u180f":
        return 0x1800 <= cp <= 0x18AF  # Mongolian
    if selector >= "\U000e0100":
        return 0x2E80 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x3FFFF  # CJK
    return (_is_emoji_neighbour(before) or before in "0123456789#*" or 0x2000 <= cp <= 0x2BFF
            or unicodedata.category(before) in ("So", "Sm", "Sc") or 0x2E80 <= cp <= 0x9FFF
            or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x3FFFF)


def _is_emoji_neighbour(ch: str) -> bool:
    if not ch:
        return False
    if ch == "\ufe0f" or ord(ch) >= 0x1F000 or unicodedata.category(ch) == "So":
        return True
    return 0x1F3FB <= ord(ch) <= 0x1F3FF


def _is_script_letter(ch: str) -> bool:
    return bool(ch) and ord(ch) >= 0x0590 and unicodedata.category(ch)[0] in "LM"


def scan_content(text: str, limit: int = 20) -> list[Finding]:
    """Reasons to refuse `text`, at most `limit` of them (empty list: acceptable)."""
    found: list[Finding] = []

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    for m in _CONTROL.finditer(text):
        found.append(Finding("control-character", f"control character U+{ord(m.group()):04X}", line_of(m.start())))
        if len(found) >= limit:
            return found
    for m in _INVISIBLE.finditer(text):
        ch = m.group()
        cp = ord(ch)
        code = "bidi-control" if _BIDI.match(ch) else "invisible-character"
        found.append(Finding(code, f"{'bidirectional control' if code == 'bidi-control' else 'invisible'} character U+{cp:04X}", line_of(m.start())))
        if len(found) >= limit:
            return found
    # Zero-width (non-)joiners are only acceptable inside an emoji sequence (family emoji)
    # or between letters of scripts that need them (Persian, Indic); never in Latin text.
    for joiner in _JOINERS:
        start = 0
        while True:
            i = text.find(joiner, start)
            if i < 0:
                break
            start = i + 1
            before = text[i - 1] if i > 0 else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            if joiner == _ZWJ and _is_emoji_neighbour(before) and _is_emoji_neighbour(after):
                continue
            if _is_script_letter(before) and _is_script_letter(after):
                continue
            found.append(Finding("invisible-character", f"invisible character U+{ord(joiner):04X} outside an emoji sequence or joining script", line_of(i)))
            if len(found) >= limit:
                return found
    # Two or more variation selectors in a row select nothing a reader can see: they are
    # a known way to smuggle hidden bytes after an emoji.
    for m in _VS_RUN.finditer(text):
        found.append(Finding("invisible-character", f"{len(m.group())} variation selectors in a row (hidden data)", line_of(m.start())))
        if len(found) >= limit:
            return found
    for m in _SELECTOR.finditer(text):
        before = text[m.start() - 1] if m.start() else ""
        if not _selector_base(m.group(), before):
            found.append(Finding("invisible-character", f"variation selector U+{ord(m.group()):04X} after a "
                                 "character it cannot change (hidden data)", line_of(m.start())))
            if len(found) >= limit:
                return found
    i = text.find(_BRAILLE_BLANK)
    while i >= 0:
        near = text[max(i - 1, 0):i] + text[i + 1:i + 2]
        if not any(0x2801 <= ord(c) <= 0x28FF for c in near):
            found.append(Finding("invisible-character", "invisible character U+2800 outside Braille", line_of(i)))
            if len(found) >= limit:
                return found
        i = text.find(_BRAILLE_BLANK, i + 1)
    # Markers are matched on the compatibility-folded text too, so fullwidth or styled
    # letters (ｉｇｎｏｒｅ, 𝐢𝐠𝐧𝐨𝐫𝐞) do not slip past them. NFKC keeps line breaks.
    folded = unicodedata.normalize("NFKC", text)
    plain = for_matching(folded)
    for name, rx in INJECTION_PATTERNS:
        m = rx.search(text) or (rx.search(folded) if folded != text else None) or \
            (rx.search(plain) if plain != folded else None)
        if m:
            found.append(Finding("prompt-injection", f"prompt-injection marker ({name})",
                                 (m.string.count("\n", 0, m.start()) + 1)))
            if len(found) >= limit:
                return found
    return found


def reveal(text: str) -> str:
    """Make refused characters visible (`<U+202E>`), for quarantined copies and messages."""

    def sub(m: re.Match[str]) -> str:
        return f"<U+{ord(m.group()):04X}>"

    text = _CONTROL.sub(sub, text)
    text = _INVISIBLE.sub(sub, text)
    text = _VS_RUN.sub(lambda m: "".join(f"<U+{ord(c):04X}>" for c in m.group()), text)
    text = re.sub(r"(?<![\u2801-\u28ff])\u2800(?![\u2801-\u28ff])", sub, text)
    text = "".join(f"<U+{ord(c):04X}>" if _SELECTOR.match(c) and not _selector_base(c, text[i - 1] if i else "")
                   else c for i, c in enumerate(text)) if _SELECTOR.search(text) else text
    for joiner in _JOINERS:
        text = text.replace(joiner, f"<U+{ord(joiner):04X}>")
    return text


def has_hidden_characters(text: str) -> bool:
    """A control, invisible or joiner character anywhere in `text` (paths allow none)."""
    return bool(_CONTROL.search(text) or _INVISIBLE.search(text) or any(j in text for j in _JOINERS))
