"""Whoosh's posting pipeline, grouped by term instead of sorted posting by posting.

Whoosh's `SegmentWriter` sends every posting through a `PostingPool` (one 5-tuple per
posting, sorted at commit) and then, posting by posting, through `add_postings` and the
W3 postings writer (four Python calls and four asserts each). On a 10,000-document
corpus that is 4.8 million postings and most of the BM25 stage's CPU time, which a full
build with embeddings takes from the embedding workers.

`install(writer)` replaces the writer's pool with `TermPool`, which appends each posting
to its term's arrays (postings of one term arrive in ascending document order: every
document and every merged reader gets numbers above the previous ones), and its segment
flush with `flush_segment`, which writes each term's blocks from array slices. The bytes
written are the ones Whoosh writes (tests compare the segment files); only the order of
work differs. It relies on W3 codec internals (`W3PostingsWriter`'s block buffers, read
by `_write_block` and `W3TermInfo.add_block`); `install` leaves any other writer alone.

Memory: about 20 bytes a posting until the commit (Whoosh's pool holds about 80 until
it spills to disk at `limitmb`), so about 100 MB for 10,000 documents.
"""

from __future__ import annotations

from array import array
from types import MethodType
from typing import Any


class TermPool:
    """Stands in for Whoosh's `PostingPool`: postings grouped by (field, term)."""

    def __init__(self) -> None:
        # field name -> term bytes -> (document numbers, weights, encoded values)
        self.fields: dict[str, dict[bytes, tuple[array, array, list]]] = {}

    def add(self, item: tuple) -> None:
        fieldname, btext, docnum, weight, value = item
        if docnum == -1:  # Whoosh's marker for spelling words; no field of ours has them
            return
        terms = self.fields.get(fieldname)
        if terms is None:
            terms = self.fields[fieldname] = {}
        post = terms.get(btext)
        if post is None:
            post = terms[btext] = (array("I"), array("d"), [])
        post[0].append(docnum)
        post[1].append(weight)
        post[2].append(value)

    def iter_postings(self):
        """Whoosh's interface: (field, term, docnum, weight, value) in sorted order."""
        for fieldname in sorted(self.fields):
            terms = self.fields[fieldname]
            for btext in sorted(terms):
                ids, weights, values = _in_order(terms[btext])
                for i in range(len(ids)):
                    yield fieldname, btext, ids[i], weights[i], values[i]

    def cleanup(self) -> None:
        self.fields.clear()


def _in_order(post: tuple[array, array, list]) -> tuple[array, array, list]:
    ids, weights, values = post
    if all(ids[i] < ids[i + 1] for i in range(len(ids) - 1)):
        return post
    order = sorted(range(len(ids)), key=ids.__getitem__)  # never seen; kept correct anyway
    return (array("I", (ids[i] for i in order)), array("d", (weights[i] for i in order)),
            [values[i] for i in order])


def _write_term(pw: Any, ids: array, weights: array, values: list, lengths: list[int] | None,
                finish: Any) -> None:
    """One term's postings as W3 blocks: what `add_posting` per posting would buffer."""
    limit = pw._blocklimit
    n = len(ids)
    for start in range(0, n, limit):
        end = min(start + limit, n)
        block_ids = ids[start:end]
        block_weights = weights[start:end]
        block_values = values[start:end]
        pw._ids = block_ids
        pw._weights = array("f", block_weights)
        pw._values = block_values if all(block_values) else [v for v in block_values if v]
        pw._maxweight = max(0, max(block_weights))
        if lengths is None:
            pw._minlength, pw._maxlength = None, 0
        else:
            present = [x for x in map(lengths.__getitem__, block_ids) if x]
            pw._minlength = min(present) if present else None
            pw._maxlength = max(present) if present else 0
        if end < n:
            pw._write_block()
    finish()  # finish_postings writes the last block (marked last) and files the term


def flush_segment(self: Any) -> None:
    """`SegmentWriter._flush_segment` for a writer whose pool is a `TermPool`."""
    self.perdocwriter.close()
    pdr = self.per_document_reader() if self.codec.length_stats else None
    fw = self.fieldwriter
    pool: TermPool = self.pool
    try:
        for fieldname in sorted(pool.fields):
            terms = pool.fields[fieldname]
            if not terms:  # Whoosh numbers only the fields that have postings
                continue
            fieldobj = self.schema[fieldname]
            lengths = None  # an unscored field has no lengths column: Whoosh reads 0s
            if pdr is not None and fieldobj.scorable:
                dfl = pdr.doc_field_length
                lengths = [dfl(d, fieldname, 0) for d in range(pdr.doc_count_all())]
            fw.start_field(fieldname, fieldobj)
            for btext in sorted(terms):
                ids, weights, values = _in_order(terms[btext])
                fw.start_term(btext)
                _write_term(fw._postwriter, ids, weights, values, lengths, fw.finish_term)
            fw.finish_field()
        fw.close()
    finally:
        if pdr is not None:
            pdr.close()


def install(writer: Any) -> bool:
    """Use the grouped pool and flush on this Whoosh writer, if it is the kind we know."""
    from whoosh.codec.whoosh3 import W3Codec, W3PostingsWriter
    from whoosh.writing import PostingPool, SegmentWriter

    if not (isinstance(writer, SegmentWriter) and isinstance(writer.codec, W3Codec)
            and isinstance(writer.pool, PostingPool) and not writer.pool.current
            and hasattr(W3PostingsWriter, "_write_block")):
        return False
    writer.pool.cleanup()
    writer.pool = TermPool()
    writer._flush_segment = MethodType(flush_segment, writer)
    return True

