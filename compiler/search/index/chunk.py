"""Documents -> chunks: split at headings, then size with the embedding model's tokenizer.

Rules (what the tests pin down):

- A section runs from a heading (ATX, outside fenced code) to the next heading; text
  before the first heading is a section too. Each chunk records its heading path and the
  1-based line range in the *source file* (body line 1 is source line `Document.body_line`).
- A section that fits the budget is one chunk. A longer one is packed paragraph by
  paragraph (fenced code stays together when it fits), then line by line, then long lines
  are cut at token boundaries; consecutive chunks of one section overlap by up to
  `overlap` tokens.
- A section smaller than `min_tokens` joins the previous chunk when both fit the budget,
  so headings over a two-item list do not become chunks of their own; headings over
  nothing are no chunk (a document of nothing else is one chunk of its title).
- Boundaries depend only on a section's own text (plus, for a small section, whether it
  fits after its predecessor): editing one section changes only that section's chunks
  (and possibly a small section merged into it). Unchanged chunks keep their text hash,
  so they are never re-embedded.
- The claim store's history on an entity page is not page content: its Timeline and
  Evidence blocks (between `<!-- commonplace:timeline|evidence:start -->` and `...:end -->`)
  and the collapsed History of retired claims inside the Claims block (`details`) are
  blank lines to the chunker, and so are all `<!-- commonplace:...-->` marker lines. A
  replaced or forgotten statement is not found through them (the claim log and `get` keep
  the history); a block that never ends hides only its marker line (`history_lines`).
- The text that is embedded is `title > heading path` (at most `PREFIX_TOKENS` tokens)
  plus the chunk text with link syntax reduced to labels; the budget for the chunk text is
  `max_tokens - 2 - PREFIX_TOKENS`, so the model never truncates a chunk.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Protocol, Sequence

from ...model import Document

# A new version makes the next full build rebuild indexes made the old way (embeddings come
# from the cache). 5: outgoing link text weighs less in BM25 (bm25.FIELD_WEIGHTS). 6:
# `%%comments%%` are in no chunk. 7: nor the claim store's Timeline, Evidence and History
# blocks and marker lines (`history_lines`). 8: no chunk of headings alone.
CHUNKER_VERSION = 8
_BODY = re.compile(r"^(?!\s*#)\s*\S", re.M)  # a line that is not a heading
PREFIX_TOKENS = 32
SPECIAL_TOKENS = 2  # [CLS] ... [SEP]

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_WIKILINK = re.compile(r"\[\[([^\]\|#]*)(?:#([^\]\|]*))?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_REGEX_TOKEN = re.compile(r"\w+|[^\w\s]")
_MARKER = re.compile(r"^ {0,3}<!-- commonplace:([a-z0-9_-]+):(start|end)(?:[ \t][^>]*)? -->[ \t\r]*$")
HISTORY_BLOCKS = ("timeline", "evidence")  # managed blocks that are history, wherever they are


# --------------------------------------------------------------------------- tokenizers


class TokenCounter(Protocol):
    name: str

    def count_many(self, texts: Sequence[str]) -> list[int]: ...

    def spans(self, text: str) -> list[tuple[int, int]]: ...


class HFTokenCounter:
    """The model's own fast tokenizer (`tokenizer.json`), without torch or transformers."""

    def __init__(self, path: Path, name: str):
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(path))
        tok.no_truncation()
        tok.no_padding()
        self._tok = tok
        self.name = name

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        # encode_batch_fast (tokenizers >= 0.20) skips character offsets: 10-15% faster here
        encode = getattr(self._tok, "encode_batch_fast", self._tok.encode_batch)
        return [len(e.ids) for e in encode(list(texts), add_special_tokens=False)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        return list(self._tok.encode(text, add_special_tokens=False).offsets)


class RegexTokenCounter:
    """Fallback when the model's tokenizer is not available locally: words and symbols."""

    name = "regex-v1"

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(_REGEX_TOKEN.findall(t)) for t in texts]

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _REGEX_TOKEN.finditer(text)]


_counters: dict[str, TokenCounter] = {}


def token_counter(model: str | None = None) -> TokenCounter:
    """The tokenizer of `model` (default model when None), cached per process."""
    from ..embedding.base import resolve_model

    ref = resolve_model(model)
    counter = _counters.get(ref.model_id)
    if counter is None:
        tj = Path(ref.location) / "tokenizer.json" if ref.is_local else None
        if tj is not None and tj.is_file():
            counter = HFTokenCounter(tj, f"{ref.model_id}:tokenizer.json")
        else:
            counter = _hub_counter(ref.location) or RegexTokenCounter()
        _counters[ref.model_id] = counter
    return counter


def _hub_counter(name: str) -> TokenCounter | None:
    """tokenizer.json of a hub model already in the local Hugging Face cache, if any."""
    try:
        from huggingface_hub import try_to_load_from_cache

        p = try_to_load_from_cache(name, "tokenizer.json")
    except Exception:  # noqa: BLE001 - any failure means "not available offline"
        return None
    if isinstance(p, str) and Path(p).is_file():
        return HFTokenCounter(Path(p), f"{name}:tokenizer.json")
    return None


# --------------------------------------------------------------------------- chunks


@dataclass(frozen=True)
class Chunk:
    path: str
    ordinal: int  # position within the document, from 0
    start_line: int  # 1-based source lines, inclusive
    end_line: int
    headings: tuple[str, ...]
    text: str  # the source text of the chunk (markdown)
    tokens: int  # tokens of `text` (model tokenizer)
    prefix: str  # "title > heading path" context line (at most PREFIX_TOKENS tokens)
    embed_text: str  # what the model sees: compose_embed_text(prefix, text)
    text_hash: str  # sha256 hex of embed_text: the embedding cache key (with the model)

    @property
    def heading(self) -> str:
        return " > ".join(self.headings)

    @property
    def lines(self) -> str:
        return f"{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class ChunkConfig:
    max_tokens: int = 256
    overlap: int = 16
    min_tokens: int | None = None  # default: max_tokens // 5

    @property
    def budget(self) -> int:
        return max(16, self.max_tokens - SPECIAL_TOKENS - PREFIX_TOKENS)

    @property
    def small(self) -> int:
        return self.min_tokens if self.min_tokens is not None else self.max_tokens // 5

    def identity(self, counter: TokenCounter) -> str:
        return f"chunker-v{CHUNKER_VERSION}:{counter.name}:{self.max_tokens}:{self.overlap}:{self.small}"


# A piece is part of one body line: (line index, start char, end char, tokens).
_Piece = tuple[int, int, int, int]


def clean_inline(text: str) -> str:
    """Link syntax -> the words a reader sees (for embeddings and snippets)."""

    def wl(m: re.Match) -> str:
        target, heading, label = m.group(1), m.group(2), m.group(3)
        if label:
            return label
        tail = target.rsplit("/", 1)[-1]
        if tail.endswith(".md"):
            tail = tail[:-3]
        return f"{tail} {heading}".strip() if heading else tail

    text = _WIKILINK.sub(wl, text)
    return _MDLINK.sub(lambda m: m.group(1), text)


def _code_lines(lines: Iterable[str]) -> Iterator[str]:
    """Per line: "open" (a fence opening a code block), "code" (inside it, or its closing
    fence) or "" (prose). The one place that knows how fenced code nests."""
    fence: str | None = None
    for line in lines:
        fm = _FENCE.match(line)
        if fence is not None:
            if fm and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence):
                fence = None
            yield "code"
        elif fm:
            fence = fm.group(1)
            yield "open"
        else:
            yield ""


def _sections(lines: list[str]) -> list[tuple[int, int, tuple[str, ...]]]:
    """(first line index, end index exclusive, heading path) per section."""
    out: list[tuple[int, int, tuple[str, ...]]] = []
    stack: list[tuple[int, str]] = []
    start = 0
    current: tuple[str, ...] = ()
    for i, (line, code) in enumerate(zip(lines, _code_lines(lines))):
        if code:
            continue
        hm = _HEADING.match(line)
        if not hm:
            continue
        if i > start:
            out.append((start, i, current))
        level = len(hm.group(1))
        text = clean_inline((hm.group(2) or "").strip())
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        current = tuple(t for _, t in stack if t)
        start = i
    if len(lines) > start:
        out.append((start, len(lines), current))
    return out


def _paragraphs(lines: list[str], lo: int, hi: int) -> list[list[int]]:
    """Line indexes grouped into paragraphs; blank lines attach to the paragraph before."""
    paras: list[list[int]] = []
    cur: list[int] = []
    for i, code in zip(range(lo, hi), _code_lines(lines[lo:hi])):
        if code:  # a code block stays in one paragraph, blank lines and all
            cur.append(i)
            continue
        if not lines[i].strip():
            cur.append(i)
            if any(lines[j].strip() for j in cur):
                paras.append(cur)
                cur = []
            continue
        cur.append(i)
    if cur:
        if paras and not any(lines[j].strip() for j in cur):
            paras[-1].extend(cur)
        else:
            paras.append(cur)
    return paras


class _Packer:
    def __init__(self, lines: list[str], counts: list[int], counter: TokenCounter, cfg: ChunkConfig):
        self.lines = lines
        self.counts = counts
        self.counter = counter
        self.budget = cfg.budget
        self.overlap = min(cfg.overlap, self.budget // 2)

    def line_pieces(self, i: int) -> list[_Piece]:
        """A line as pieces of at most `budget` tokens (cut at word boundaries if possible)."""
        n = self.counts[i]
        line = self.lines[i]
        if n <= self.budget:
            return [(i, 0, len(line), n)]
        spans = self.counter.spans(line)
        pieces: list[_Piece] = []
        k = 0
        cs = 0
        while k < len(spans):
            hi = min(k + self.budget, len(spans))
            if hi < len(spans):
                cut = spans[hi][0]
                # prefer to cut at whitespace (never inside a word)
                ws = line.rfind(" ", cs + 1, cut + 1)
                if ws > cs:
                    cut = ws
                    while hi > k + 1 and spans[hi - 1][0] >= cut:
                        hi -= 1
                else:
                    cut = spans[hi][0]
            else:
                cut = len(line)
            pieces.append((i, cs, cut, hi - k))
            cs = cut
            k = hi
        return pieces

    def tail(self, cur: list[_Piece]) -> list[_Piece]:
        """The last <= overlap tokens of a chunk, as pieces (for the next chunk)."""
        if self.overlap <= 0:
            return []
        out: list[_Piece] = []
        total = 0
        for piece in reversed(cur):
            li, cs, ce, n = piece
            if total + n <= self.overlap:
                out.append(piece)
                total += n
                continue
            room = self.overlap - total
            if room > 0:
                text = self.lines[li][cs:ce]
                spans = self.counter.spans(text)
                if len(spans) > room:
                    cut = spans[len(spans) - room][0]
                    nxt = text.find(" ", cut)
                    if cut > 0 and not text[cut - 1].isspace():
                        cut = nxt + 1 if nxt >= 0 else len(text)
                    kept = sum(1 for s, _ in spans if s >= cut)
                    if kept and cut < len(text):
                        out.append((li, cs + cut, ce, kept))
            break
        out.reverse()
        # an overlap of only blank lines is no overlap
        return out if any(p[3] for p in out) else []

    def pack(self, lo: int, hi: int) -> list[list[_Piece]]:
        chunks: list[list[_Piece]] = []
        cur: list[_Piece] = []
        cur_tok = 0
        new_tok = 0  # tokens beyond the overlap carried from the previous chunk

        def flush(keep_overlap: bool = True) -> None:
            nonlocal cur, cur_tok, new_tok
            if new_tok > 0:
                chunks.append(cur)
            carried = self.tail(cur) if keep_overlap and new_tok > 0 else []
            cur = carried
            cur_tok = sum(p[3] for p in carried)
            new_tok = 0

        for para in _paragraphs(self.lines, lo, hi):
            ptok = sum(self.counts[i] for i in para)
            if cur_tok + ptok <= self.budget:
                cur.extend((i, 0, len(self.lines[i]), self.counts[i]) for i in para)
                cur_tok += ptok
                new_tok += ptok
                continue
            if new_tok > 0:
                flush()
            if cur_tok + ptok <= self.budget:
                cur.extend((i, 0, len(self.lines[i]), self.counts[i]) for i in para)
                cur_tok += ptok
                new_tok += ptok
                continue
            for i in para:
                for piece in self.line_pieces(i):
                    n = piece[3]
                    if cur_tok + n > self.budget:
                        flush()
                        if cur_tok + n > self.budget:
                            cur, cur_tok = [], 0
                    cur.append(piece)
                    cur_tok += n
                    new_tok += n
        if new_tok > 0 or (not chunks and cur):
            chunks.append(cur)
        return chunks


def _text_of(lines: list[str], pieces: list[_Piece]) -> tuple[str, int, int]:
    """Chunk text and its first/last non-blank body line index."""
    parts: dict[int, list[tuple[int, int]]] = {}
    order: list[int] = []
    for li, cs, ce, _ in pieces:
        if li not in parts:
            parts[li] = []
            order.append(li)
        parts[li].append((cs, ce))
    out_lines = []
    for li in order:
        spans = parts[li]
        line = lines[li]
        lo = min(s for s, _ in spans)
        hi = max(e for _, e in spans)
        out_lines.append((li, line[lo:hi]))
    nonblank = [li for li, t in out_lines if t.strip()]
    if not nonblank:
        return "", order[0], order[0]
    first, last = nonblank[0], nonblank[-1]
    text = "\n".join(t for li, t in out_lines if first <= li <= last)
    return text, first, last


def _prefix(title: str, headings: tuple[str, ...], counter: TokenCounter) -> str:
    parts = [title] + [h for h in headings if h and h != title]
    prefix = " > ".join(p for p in parts if p)
    spans = counter.spans(prefix)
    if len(spans) > PREFIX_TOKENS:
        prefix = prefix[: spans[PREFIX_TOKENS - 1][1]]
    return prefix


def _without_code(text: str) -> str:
    """Fenced code blocks reduced to their opening line (` ```sql `): a sentence model
    reads code poorly, and identifiers in code are the BM25 index's job."""
    if "```" not in text and "~~~" not in text:
        return text
    lines = text.split("\n")
    return "\n".join(line.strip() if code == "open" else line
                     for line, code in zip(lines, _code_lines(lines)) if code != "code")


_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_EMPHASIS = re.compile(r"\*\*|__|~~")


def _plain(text: str) -> str:
    """Markdown syntax the model would spend tokens on without learning anything: table
    rule rows, cell pipes, bold and strike markers. Code-span backticks stay: without
    them vector MRR on identifier questions fell from 0.93 to 0.82 (labelled set)."""
    out = []
    for line in text.split("\n"):
        if _TABLE_RULE.match(line) and "-" in line:
            continue
        stripped = line.strip()
        if stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1:
            line = " ; ".join(cell.strip() for cell in stripped[1:-1].split("|"))
        out.append(line if _FENCE.match(line) else _EMPHASIS.sub("", line))
    return "\n".join(out)


def compose_embed_text(prefix: str, text: str) -> str:
    """What the model sees for a chunk: the context line, then the text with link syntax
    reduced to labels, fenced code reduced to its fence line and table and emphasis
    syntax dropped. (Dropping a leading heading line that the context line repeats saves
    ~2% of tokens but measurably hurt retrieval on the labelled set, so it stays.)"""
    body = _plain(clean_inline(_without_code(text)))
    if not prefix:
        return body
    return f"{prefix}\n{body}" if body else prefix


def text_hash(embed_text: str) -> str:
    return hashlib.sha256(embed_text.encode("utf-8")).hexdigest()


def _history(lines: list[str]) -> tuple[set[int], set[int]]:
    """(`history_lines`, the lines of its blocks only: without the lone markers)."""
    if not any("<!-- commonplace:" in line for line in lines):
        return set(), set()
    markers: list[tuple[int, str, str]] = []
    for i, (line, code) in enumerate(zip(lines, _code_lines(lines))):
        if not code and "<!-- commonplace:" in line:
            m = _MARKER.match(line)
            if m:
                markers.append((i, m.group(1), m.group(2)))
    blocks: set[int] = set()
    claims = False
    for k, (i, name, which) in enumerate(markers):
        if name == "claims":
            claims = which == "start"
            continue
        if which != "start" or not (name in HISTORY_BLOCKS or (name == "details" and claims)):
            continue
        after = next(((j, w) for j, n, w in markers[k + 1:] if n == name), None)
        if after is not None and after[1] == "end":
            blocks.update(range(i, after[0] + 1))
    return blocks | {i for i, _n, _w in markers}, blocks


def history_lines(lines: list[str]) -> set[int]:
    """Indexes of the body lines that are the claim store's bookkeeping, not page content:
    each `<!-- commonplace:NAME:start|end -->` marker line (outside fenced code), every line
    of a Timeline or Evidence block, and of a `details` block (the collapsed History of
    retired and ended claims) inside the Claims block. A block whose end marker never
    comes hides only its start marker: text a person wrote below it stays indexed."""
    return _history(lines)[0]


def index_lines(body: str) -> list[str]:
    """A document body's lines as the chunker sees them: `history_lines` blanked (so line
    numbers stay those of the source)."""
    lines = body.split("\n")  # `parse` cut its `%%comments%%` (md_comments)
    for i in history_lines(lines):
        lines[i] = ""
    return lines


def _runs(lo: int, hi: int, blocks: set[int]) -> list[tuple[int, int]]:
    """[lo, hi) without the lines in `blocks`, as maximal ranges."""
    if not blocks:
        return [(lo, hi)]
    out, start = [], lo
    for i in range(lo, hi):
        if i in blocks:
            if i > start:
                out.append((start, i))
            start = i + 1
    if hi > start:
        out.append((start, hi))
    return out


def line_counts(lines: list[str], counter: TokenCounter) -> list[int]:
    counts = [0] * len(lines)
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    for i, n in zip(nonblank, counter.count_many([lines[i] for i in nonblank])):
        counts[i] = n
    return counts


def chunk_document(doc: Document, counter: TokenCounter, cfg: ChunkConfig = ChunkConfig(),
                   counts: list[int] | None = None) -> list[Chunk]:
    """Chunks of one document; `counts` are its body lines' token counts if known."""
    lines = doc.body.split("\n")  # `parse` cut its `%%comments%%` (md_comments)
    hidden, blocks = _history(lines)
    for i in hidden:
        lines[i] = ""
    if counts is None or len(counts) != len(lines):
        counts = line_counts(lines, counter)
    elif hidden:
        counts = [0 if i in hidden else n for i, n in enumerate(counts)]
    packer = _Packer(lines, counts, counter, cfg)

    # (pieces, headings, section tokens) per chunk, before small-section merging
    groups: list[tuple[list[_Piece], tuple[str, ...]]] = []
    sizes: list[int] = []
    end = 0  # where the text of the last group ends (exclusive): no merging across a block
    for s_lo, s_hi, headings in _sections(lines):
        for lo, hi in _runs(s_lo, s_hi, blocks):
            if not any(counts[i] for i in range(lo, hi)):
                # blank-only (or heading-only with no tokens): nothing to index
                if not any(lines[i].strip() for i in range(lo, hi)):
                    continue
            packed = packer.pack(lo, hi)
            total = sum(counts[i] for i in range(lo, hi))
            if (
                len(packed) == 1
                and total < cfg.small
                and groups
                and sizes[-1] + total <= cfg.budget
                and not (blocks and any(i in blocks for i in range(end, lo)))
            ):
                groups[-1][0].extend(packed[0])
                sizes[-1] += total
                end = hi
                continue
            for pieces in packed:
                groups.append((pieces, headings))
                sizes.append(sum(p[3] for p in pieces))
            end = hi

    chunks: list[Chunk] = []
    for pieces, headings in groups:
        text, first, last = _text_of(lines, pieces)
        if not text.strip() or len(groups) > 1 and not _BODY.search(text):
            continue  # headings over nothing ("# Harbor", "## Claims") are no result: the prefix has them
        prefix = _prefix(doc.title, headings, counter)
        embed_text = compose_embed_text(prefix, text)
        chunks.append(
            Chunk(
                path=doc.path,
                ordinal=len(chunks),
                start_line=doc.body_line + first,
                end_line=doc.body_line + last,
                headings=headings,
                text=text,
                tokens=sum(p[3] for p in pieces),
                prefix=prefix,
                embed_text=embed_text,
                text_hash=text_hash(embed_text),
            )
        )
    if not chunks:
        # Every document is findable, if only by its title.
        prefix = _prefix(doc.title, (), counter)
        chunks.append(
            Chunk(doc.path, 0, doc.body_line, doc.body_line, (), "", 0, prefix, prefix, text_hash(prefix))
        )
    return chunks


def chunk_documents(docs: Iterable[Document], counter: TokenCounter, cfg: ChunkConfig = ChunkConfig(),
                    batch: int = 256) -> Iterator[tuple[Document, list[Chunk]]]:
    """(document, chunks) for each document; lines are tokenized a batch of documents at a time
    (one call into the tokenizer for many documents is about twice as fast)."""
    docs = list(docs)
    for i in range(0, len(docs), batch):
        group = docs[i : i + batch]
        all_lines = [index_lines(d.body) for d in group]
        flat = [line for lines in all_lines for line in lines if line.strip()]
        flat_counts = iter(counter.count_many(flat))
        for d, lines in zip(group, all_lines):
            counts = [next(flat_counts) if line.strip() else 0 for line in lines]
            yield d, chunk_document(d, counter, cfg, counts)
