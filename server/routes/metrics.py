"""`GET /metrics`: Prometheus text, from the numbers `/v1/status` reports.

Dory's four gauges (`dory_corpus_files`, `dory_indexed_files`, `dory_indexed_chunks`,
`dory_indexed_vectors`), then commonplace's own. Behind the same auth as `/v1` reads
(`guard.authenticate` lists /metrics as protected)."""

from __future__ import annotations

from flask import Blueprint, Response

from ..context import state
from ..models import StatusRequest
from ..ops import status as status_op
from .v1 import op_context

metrics = Blueprint("metrics", __name__)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
GAUGES = (
    ("dory_corpus_files", "corpus_files", "Number of markdown files in the corpus (sessions excluded)."),
    ("dory_indexed_files", "files_indexed", "Number of files in the search index."),
    ("dory_indexed_chunks", "chunks_indexed", "Number of chunks in the search index."),
    ("dory_indexed_vectors", "vectors_indexed", "Number of chunks with a vector in the search index."),
    ("commonplace_session_files", "session_files", "Number of session files under logs/sessions/."),
    ("commonplace_ready", "ready", "1 once the corpus and index are loaded (as /healthz)."),
    ("commonplace_index_healthy", "index_healthy", "1 when every document is indexed (and embedded)."),
)


def render(values: dict[str, object]) -> str:
    lines = []
    for name, key, help_text in GAUGES:
        v = values.get(key)
        number = int(v) if isinstance(v, (bool, int)) else float(v) if isinstance(v, float) else 0
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", f"{name} {number}"]
    return "\n".join(lines) + "\n"


@metrics.route("/metrics", methods=["GET"])
def prometheus() -> Response:
    values = status_op.status(op_context(state()), StatusRequest())
    return Response(render(values), status=200, content_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"})
