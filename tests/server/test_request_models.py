"""One request model per operation (issue 27, item 2): the wire model validates a search
once, and the engine gets its own `SearchRequest` built from it, not a dict it checks again.

The HTTP answers themselves (statuses, error bodies, field names) are guarded by
test_api, test_dory_reads and the MCP tests; these check the hand-over in between.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest

from commonplace.compiler import writes
from commonplace.compiler.search.read import query as q
from commonplace.server.errors import ApiError
from commonplace.server.models import SearchRequest, WriteRequest
from commonplace.server.ops import OpContext
from commonplace.server.ops.search import engine_request, search
from commonplace.server.validation import validate


class Recorder:
    """Stands in for the live corpus's search: keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def search(self, request: Any) -> dict[str, Any]:
        self.asked.append(request)
        return {"query": request.query, "count": 0, "results": [], "took_ms": 0.0, "warnings": []}


def _engine(body: dict[str, Any]) -> q.SearchRequest:
    return engine_request(validate(SearchRequest, body=body))


def test_the_engine_gets_a_typed_request_not_a_body(tmp_path: Path) -> None:
    live = Recorder()
    answer = search(OpContext(live=live, root=tmp_path), validate(SearchRequest, body={"query": "gauge", "k": "3"}))
    assert answer["count"] == 0
    (asked,) = live.asked
    assert isinstance(asked, q.SearchRequest)
    assert (asked.query, asked.k, asked.mode, asked.debug, asked.snippet_marks) == ("gauge", 3, "hybrid", True, "none")


@pytest.mark.parametrize("body", [
    {"query": "x"},
    {"query": "x", "mode": "Keyword", "k": 7, "corpus": "all"},
    {"query": "x", "mode": "semantic", "include_content": False},
    {"query": "x", "mode": "exact", "min_score": 0.25, "snippet_marks": "brackets"},
    {"query": "x", "scope": {"type": "Decision,Person", "status": ["Active", " "], "tags": "a, b",
                             "path_glob": ["notes/*"], "since": "2025-01-02", "until": "2025-06-30T10:00:00Z"}},
])
def test_same_engine_request_as_the_python_api(body: dict[str, Any]) -> None:
    """The wire path and the dict path (`normalize_request`, the command line's) agree."""
    sent = _engine(body)
    via_dict, warnings = q.normalize_request({**body, "debug": True, "include_content": body.get("include_content", True),
                                              "snippet_marks": body.get("snippet_marks", "none")})
    assert sent == via_dict and warnings == []


def test_dory_names_and_recall() -> None:
    assert _engine({"query": "x", "min_relevance_score": 0.4}).min_score == 0.4
    assert _engine({"query": "x", "min_relevance_score": 0.4, "min_score": 0.1}).min_score == 0.1  # min_score wins
    assert _engine({"query": "x"}).min_score is None  # unsent: hybrid may leave out weak meaning-only hits
    recall = _engine({"query": "x", "mode": "recall", "corpus": "durable"})
    assert (recall.mode, recall.corpus) == ("hybrid", "sessions")


@pytest.mark.parametrize("scope,field", [({"since": "yesterday"}, "scope.since"), ({"until": "2025-13-01"}, "scope.until"),
                                         ({"as_of": "soon"}, "as_of")])
def test_a_bad_date_is_the_same_400(scope: dict[str, Any], field: str) -> None:
    with pytest.raises(ApiError) as err:
        _engine({"query": "x", "scope": scope})
    assert (err.value.status, err.value.code) == (400, "invalid_parameter")
    with pytest.raises(q.InvalidRequest) as direct:
        q.normalize_request({"query": "x", "scope": scope})
    assert err.value.message == str(direct.value) and f"`{field}`" in err.value.message


def test_as_of_is_answered_with_a_warning() -> None:
    req = _engine({"query": "x", "scope": {"as_of": "2025-01-01"}})
    assert req.as_of == "2025-01-01"
    assert q.request_warnings(req) == ["as_of is not supported by search yet; results reflect the current corpus"]


def _literal(model: type, name: str) -> set[str]:
    ann = model.model_fields[name].annotation
    args = typing.get_args(ann)
    if args and typing.get_origin(ann) is typing.Union:  # Optional[Literal[...]]
        args = typing.get_args(args[0])
    return set(args)


def test_the_wire_vocabulary_is_the_engines() -> None:
    """What the wire model accepts is exactly what the engine and the writer know."""
    assert _literal(SearchRequest, "mode") == set(q.MODES) | {"recall"}
    assert _literal(SearchRequest, "corpus") == set(q.CORPORA)
    assert _literal(SearchRequest, "snippet_marks") == set(q.SNIPPET_MARKS)
    assert _literal(WriteRequest, "kind") == set(writes.KINDS)
