"""Imported at start-up by the Python processes `test_site_first.py` runs (on their
PYTHONPATH): the word-hashing stand-in embedder of the search tests, which can be held.

COMMONPLACE_TEST_EMBED_HOLD=<file>: once COMMONPLACE_TEST_EMBED_FREE encode calls (default
0) have passed, every further call waits while <file> exists and writes <file>.waiting
meanwhile (the test's sign that the embedding is under way). With
COMMONPLACE_TEST_EMBED_THREAD=<name>, only calls from that thread are held. Queries
(`encode_query`) are never held.
"""

import faulthandler
import os
import signal
import sys
import threading
import time

# A test whose child hangs sends SIGUSR1 before killing it: every thread's stack goes to
# stderr, so the failure says where it hung.
faulthandler.register(signal.SIGUSR1, all_threads=True)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "search"))

from searchkit import FakeEmbedder  # noqa: E402

from commonplace.compiler.search.embedding.registry import set_embedder_factory  # noqa: E402


class HeldEmbedder(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.hold = os.environ.get("COMMONPLACE_TEST_EMBED_HOLD", "")
        self.free = int(os.environ.get("COMMONPLACE_TEST_EMBED_FREE", "0") or 0)
        self.thread = os.environ.get("COMMONPLACE_TEST_EMBED_THREAD", "")
        self.batches = 0

    def encode(self, texts):  # noqa: ANN001, ANN201
        if self.hold and (not self.thread or threading.current_thread().name == self.thread):
            self.batches += 1
            if self.batches > self.free:
                while os.path.exists(self.hold):
                    with open(self.hold + ".waiting", "w") as f:
                        f.write(str(self.batches))
                    time.sleep(0.02)
        return super().encode(texts)

    def encode_query(self, text):  # noqa: ANN001, ANN201
        return FakeEmbedder.encode(self, [text])[0]


set_embedder_factory(lambda ref: HeldEmbedder())
