"""API tokens: `.commonplace/tokens.json`, stored hashed, compared in constant time.

    commonplace token new NAME      prints the token once; only its SHA-256 is stored
    commonplace token list          names, creation dates and a short prefix (never the token)
    commonplace token revoke NAME

File format (mode 0600, written atomically):

    {"version": 1,
     "tokens": [{"name": "laptop", "hash": "sha256:<hex>", "prefix": "cp_AbC1",
                 "created": "2025-06-30T12:00:00Z"}]}

A token is `cp_` followed by 43 URL-safe characters (256 random bits), so hashing it with
plain SHA-256 is enough: there is nothing to brute-force. Verification hashes the presented
value and compares it with every stored hash using `hmac.compare_digest`, without stopping
at the first match, so timing says nothing about which token (or how much of one) matched.
The store re-reads the file when it changes, so `token new`/`revoke` take effect in a
running server without a restart.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonplace.compiler.model import state_path

TOKEN_PREFIX = "cp_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
MAX_TOKEN_CHARS = 256


class TokenError(Exception):
    pass


@dataclass(frozen=True)
class TokenInfo:
    name: str
    hash: str
    prefix: str
    created: str

    def public(self) -> dict[str, str]:
        """What `token list` shows: never the hash, never the token."""
        return {"name": self.name, "prefix": self.prefix + "…", "created": self.created}


def tokens_path(root: Path) -> Path:
    return state_path(root) / "tokens.json"


def hash_token(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class TokenStore:
    def __init__(self, root: Path) -> None:
        self.path = tokens_path(root)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._tokens: list[TokenInfo] = []

    # -- reading
    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _load(self) -> list[TokenInfo]:
        stamp = self._stat()
        with self._lock:
            if stamp == self._stamp and (stamp is not None or not self._tokens):
                return self._tokens
            tokens: list[TokenInfo] = []
            if stamp is not None:
                try:
                    data = json.loads(self.path.read_text("utf-8"))
                except (OSError, ValueError) as exc:
                    raise TokenError(f"cannot read {self.path.name}: {exc.__class__.__name__}") from None
                if not isinstance(data, dict) or not isinstance(data.get("tokens", []), list):
                    raise TokenError(f"cannot read {self.path.name}: not a token file")
                for item in data.get("tokens", []) if isinstance(data, dict) else []:
                    if not isinstance(item, dict):
                        continue
                    h = item.get("hash")
                    name = item.get("name")
                    if isinstance(h, str) and h.startswith("sha256:") and isinstance(name, str):
                        tokens.append(TokenInfo(name, h, str(item.get("prefix", "")), str(item.get("created", ""))))
            self._tokens, self._stamp = tokens, stamp
            return tokens

    def list(self) -> list[TokenInfo]:
        return list(self._load())

    def has_tokens(self) -> bool:
        try:
            return bool(self._load())
        except TokenError:
            return False

    def verify(self, presented: str | None) -> str | None:
        """Name of the token `presented` matches, or None. Constant time over the store."""
        if not presented or len(presented) > MAX_TOKEN_CHARS:
            return None
        try:
            tokens = self._load()
        except TokenError:
            return None
        digest = hash_token(presented).encode("ascii")
        match: str | None = None
        for t in tokens:
            if hmac.compare_digest(digest, t.hash.encode("ascii", "replace")) and match is None:
                match = t.name
        return match

    def configured(self) -> bool:
        """At least one token exists. Raises TokenError when the file is unreadable."""
        return bool(self._load())

    def import_dory(self, path: Path) -> list[str]:
        """Add the tokens of a Dory token file (a JSON object name -> token), hashed, under
        their names; names already here are skipped. Returns the names added."""
        try:
            data = json.loads(Path(path).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise TokenError(f"cannot read {Path(path).name}: {exc.__class__.__name__}") from None
        if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            raise TokenError(f"{Path(path).name} is not a Dory token file (a JSON object of name -> token)")
        added: list[str] = []
        from commonplace.compiler.writes import write_lock

        with write_lock(self.path.parent.parent):
            tokens = list(self._load())
            have = {t.name for t in tokens}
            for name, value in sorted(data.items()):
                if name in have or not value:
                    continue
                if not _NAME.match(name):
                    raise TokenError(f"token name {name!r} must be 1-64 characters: letters, digits, '_', '.', '@', '-'")
                created = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                tokens.append(TokenInfo(name, hash_token(value), value[:7], created))
                added.append(name)
            if added:
                self._save(tokens)
        return added

    # -- writing
    def _save(self, tokens: list[TokenInfo]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"version": 1, "tokens": [
            {"name": t.name, "hash": t.hash, "prefix": t.prefix, "created": t.created} for t in tokens
        ]}
        raw = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        finally:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
        try:
            dfd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass

    def create(self, name: str) -> str:
        """A new token named `name`; returns the token itself (shown once)."""
        if not isinstance(name, str) or not _NAME.match(name):
            raise TokenError("token name must be 1-64 characters: letters, digits, '_', '.', '@', '-' "
                             "(starting with a letter or digit)")
        from commonplace.compiler.writes import write_lock

        with write_lock(self.path.parent.parent):
            tokens = self._load_fresh()
            if any(t.name == name for t in tokens):
                raise TokenError(f"a token named {name!r} exists; revoke it first or pick another name")
            token = TOKEN_PREFIX + secrets.token_urlsafe(32)
            created = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
            tokens.append(TokenInfo(name, hash_token(token), token[: len(TOKEN_PREFIX) + 4], created))
            self._save(tokens)
        return token

    def revoke(self, name: str) -> bool:
        from commonplace.compiler.writes import write_lock

        with write_lock(self.path.parent.parent):
            tokens = self._load_fresh()
            kept = [t for t in tokens if t.name != name]
            if len(kept) == len(tokens):
                return False
            self._save(kept)
        return True

    def _load_fresh(self) -> list[TokenInfo]:
        with self._lock:
            self._stamp = None
            self._tokens = []
        return list(self._load())


def describe(tokens: list[TokenInfo]) -> list[dict[str, Any]]:
    return [t.public() for t in tokens]
