"""The optional LLM stage of a digest: an OpenAI-compatible chat completions endpoint
rewrites the extractive digest's sections; any failure keeps the extractive digest.

Configured from the environment (nothing is sent anywhere unless the URL is set):
    COMMONPLACE_DIGEST_LLM_URL      base URL, e.g. http://127.0.0.1:8000/v1 (POST <url>/chat/completions)
    COMMONPLACE_DIGEST_LLM_MODEL    model name (required with the URL)
    COMMONPLACE_DIGEST_LLM_KEY      bearer token, if the endpoint needs one
    COMMONPLACE_DIGEST_LLM_TIMEOUT  seconds (default 20)
The model is given only the extractive digest (items with their line references), never
the raw transcript, and must keep every line reference; an answer without them, an error,
or a timeout falls back (the page says which generator wrote it: `generator`).
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from dataclasses import dataclass

PROMPT = ("Rewrite this digest of a work session so it reads well. Keep the four sections and their headings "
          "(Decisions, Facts, Open questions, Follow-ups), merge duplicates, keep every item's line reference "
          "in parentheses exactly as given, add nothing that is not in the items. Answer with the markdown only.")


@dataclass(frozen=True)
class LLMConfig:
    url: str
    model: str
    key: str | None = None
    timeout: float = 20.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "LLMConfig | None":
        env = dict(os.environ if env is None else env)
        url, model = env.get("COMMONPLACE_DIGEST_LLM_URL", "").strip(), env.get("COMMONPLACE_DIGEST_LLM_MODEL", "").strip()
        if not url or not model:
            return None
        try:
            timeout = float(env.get("COMMONPLACE_DIGEST_LLM_TIMEOUT", "20"))
        except ValueError:
            timeout = 20.0
        return cls(url.rstrip("/"), model, env.get("COMMONPLACE_DIGEST_LLM_KEY") or None, max(0.1, timeout))


_REF = re.compile(r"\((?:[^()\s]+:)?L\d+(?:-\d+)?\)")


def rewrite(sections: str, cfg: LLMConfig) -> str | None:
    """The endpoint's rewrite of `sections`, or None (error, timeout, refs lost)."""
    body = json.dumps({"model": cfg.model, "temperature": 0,
                       "messages": [{"role": "system", "content": PROMPT},
                                    {"role": "user", "content": sections}]}).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    if cfg.key:
        headers["Authorization"] = f"Bearer {cfg.key}"
    req = urllib.request.Request(cfg.url + "/chat/completions", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=cfg.timeout) as r:
            data = json.loads(r.read(4 * 1024 * 1024))
        text = data["choices"][0]["message"]["content"]
    except Exception:  # noqa: BLE001 - any failure keeps the extractive digest
        return None
    if not isinstance(text, str) or not text.strip():
        return None
    wanted = set(_REF.findall(sections))
    if wanted and not wanted <= set(_REF.findall(text)):
        return None  # a rewrite that drops a source reference is not trusted
    return text.strip() + "\n"
