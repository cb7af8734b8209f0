"""Watching the corpus: file events -> debounced, coalesced refreshes.

Uses watchdog (inotify on Linux) rather than polling code of our own. Events only
name paths; whether a path was created, changed or deleted is decided when the
refresh runs, by looking at the disk. That makes every editor's save style look the
same: write in place, write-then-rename, swap files, backup files.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from ..model import STATE_DIR

DEBOUNCE_SECONDS = 0.01  # quiet time before a burst of events becomes one refresh (an editor's
# write-then-rename arrives within a millisecond; a later event just means another refresh)


def relevant(rel: str) -> bool:
    """A document or a claim log; never hidden paths (swap files, .commonplace/, .git)."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts) or rel.startswith(STATE_DIR):
        return False
    return rel.endswith(".md") or (parts[0] == "claims" and rel.endswith(".jsonl"))


def attachment(rel: str) -> bool:
    """A file pages may embed or link (`attachments`), outside hidden paths."""
    from ..corpus.attachments import is_attachment_target

    return not any(p.startswith(".") for p in rel.split("/")) and is_attachment_target(rel)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: "Watcher"):
        self.watcher = watcher

    def _top_level(self, raw: str | bytes) -> bool:
        path = Path(raw.decode() if isinstance(raw, bytes) else raw)
        return path.parent == self.watcher.root

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory and event.event_type not in ("moved", "deleted"):
            # A folder's mtime changes with every file in it; the file events say more. A new
            # top-level folder is the exception: it needs a watch of its own (see Watcher).
            if not (event.event_type == "created" and self._top_level(event.src_path)):
                return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.watcher.notify(Path(raw.decode() if isinstance(raw, bytes) else raw), event.is_directory)


class Watcher:
    """Calls `on_change(paths, rescan)` after each burst of relevant events.

    `paths` are corpus-relative; `rescan` is True when a whole folder moved or
    vanished, so the callee should diff the whole corpus instead.
    """

    def __init__(self, root: Path, out: Path | None, on_change: Callable[[set[str], bool], None],
                 debounce: float = DEBOUNCE_SECONDS):
        self.root = root.resolve()
        self.out = out.resolve() if out is not None else None
        self.on_change = on_change
        self.debounce = debounce
        self._pending: set[str] = set()
        self._rescan = False
        self._last = 0.0
        self._cond = threading.Condition()
        self._stop = False
        self._observer = Observer()
        self._handler = _Handler(self)
        # The root alone (its files, and folders appearing in it), then each visible folder
        # recursively: hidden folders (.commonplace/ with its index generations, .git) and
        # the output folder are never watched, so their churn costs no inotify work.
        self._observer.schedule(self._handler, str(self.root), recursive=False)
        self._watches: dict[str, object] = {}
        with self._cond:
            for child in sorted(self.root.iterdir()):
                self._watch_folder(child)
        self._thread = threading.Thread(target=self._loop, name="commonplace-watch", daemon=True)

    def _watched(self, folder: Path) -> bool:
        """A top-level folder worth watching: visible, and not the output itself (a folder that
        holds the output deeper down may hold documents too: `notify` drops output events)."""
        if folder.name.startswith(".") or folder.is_symlink() or not folder.is_dir():
            return False
        return self.out is None or folder.resolve() != self.out

    def _watch_folder(self, folder: Path) -> None:
        """Start watching a top-level folder (under `_cond`); a no-op if not wanted."""
        if folder.name in self._watches:
            return
        try:
            if self._watched(folder):
                self._watches[folder.name] = self._observer.schedule(self._handler, str(folder), recursive=True)
        except OSError:  # gone again, or unreadable: the rescan that follows copes
            pass

    def _unwatch_folder(self, name: str) -> None:
        watch = self._watches.pop(name, None)
        if watch is not None:
            try:
                self._observer.unschedule(watch)
            except (KeyError, OSError):
                pass

    def start(self) -> None:
        self._observer.start()
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._thread.join(timeout=5)

    def notify(self, path: Path, is_dir: bool) -> None:
        try:
            rel = path.resolve().relative_to(self.root).as_posix() if path.is_absolute() else path.as_posix()
        except ValueError:
            return
        if self.out is not None and (path == self.out or self.out in path.parents):
            return
        with self._cond:
            if is_dir:
                if any(p.startswith(".") for p in rel.split("/")):
                    return  # e.g. index generations coming and going: no reason to wait longer
                if "/" not in rel:  # a top-level folder appeared, vanished or was renamed
                    self._unwatch_folder(rel)
                    if (self.root / rel).is_dir():
                        self._watch_folder(self.root / rel)
                self._rescan = True
            elif relevant(rel):
                self._pending.add(rel)
            elif attachment(rel):
                self._rescan = True  # an image or other file: the rescan finds what it changed
            else:
                return
            self._last = time.monotonic()
            self._cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stop and not (self._pending or self._rescan):
                    self._cond.wait()
                if self._stop:
                    return
                # Wait for the burst to go quiet, so one save is one refresh.
                while not self._stop and time.monotonic() - self._last < self.debounce:
                    self._cond.wait(self.debounce)
                paths, rescan = self._pending, self._rescan
                self._pending, self._rescan = set(), False
            try:
                self.on_change(paths, rescan)
            except Exception as exc:  # a bad refresh must never end the watcher
                print(f"watch: refresh failed: {type(exc).__name__}: {exc}", flush=True)
