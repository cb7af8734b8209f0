"""An index written before the compiler was arranged in rooms still opens.

Whoosh pickles the schema (with our tokenizer and frequency format, by module path) into
every index's table of contents, so a module move is a data-format change unless the old
path still resolves. Without it, every existing index failed to open after an upgrade
with `ModuleNotFoundError: commonplace.compiler.search.bm25`."""

from __future__ import annotations

import io
import pickle

from commonplace.compiler.search.store import bm25

OLD = b"commonplace.compiler.search.bm25"


def test_a_schema_pickled_under_the_old_module_path_loads():
    data = pickle.dumps(bm25.make_schema(), protocol=2)  # what Whoosh writes into the TOC
    legacy = data.replace(bm25.__name__.encode(), OLD)
    assert OLD + b"\n" in legacy and bm25.__name__.encode() not in legacy
    assert pickle.loads(legacy).names() == bm25.make_schema().names()


def test_an_index_whose_toc_names_the_old_path_opens(tmp_path):
    from whoosh import index as wix
    from whoosh.filedb.structfile import StructFile

    wix.create_in(str(tmp_path), bm25.make_schema())
    toc = next(tmp_path.glob("*.toc"))
    raw = toc.read_bytes()

    def prefixed(data: bytes) -> bytes:  # the TOC holds the pickle as a length-prefixed string
        buf = io.BytesIO()
        StructFile(buf).write_string(data)
        return buf.getvalue()

    pick = pickle.dumps(bm25.make_schema(), protocol=2)
    assert raw.count(prefixed(pick)) == 1, "the TOC holds the schema as Whoosh pickles it"
    toc.write_bytes(raw.replace(prefixed(pick), prefixed(pick.replace(bm25.__name__.encode(), OLD))))
    assert OLD in toc.read_bytes()
    searcher = bm25.BM25Searcher(tmp_path)
    assert searcher.ix.schema.names() == bm25.make_schema().names()
