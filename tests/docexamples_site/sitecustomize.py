"""Imported at start-up by every Python process the doc-examples test runs (it is on
their PYTHONPATH). With COMMONPLACE_TEST_STANDIN_EMBEDDER=1, a word-hashing stand-in
replaces the embedding model, so the examples run in seconds; the slow variant of the test
runs them with the real model."""

import os
import sys

if os.environ.get("COMMONPLACE_TEST_STANDIN_EMBEDDER") == "1":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "search"))
    from searchkit import FakeEmbedder

    from commonplace.compiler.search.embedding.registry import set_embedder_factory

    set_embedder_factory(lambda ref: FakeEmbedder())
