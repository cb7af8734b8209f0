"""The wire format between the pool and its workers: a frame is a 4-byte big-endian
length and a pickle."""

from __future__ import annotations

import pickle
import struct
from typing import Any, BinaryIO


def read_frame(f: BinaryIO) -> Any:
    head = f.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack(">I", head)
    data = f.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)


def write_frame(f: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(struct.pack(">I", len(data)))
    f.write(data)
    f.flush()
