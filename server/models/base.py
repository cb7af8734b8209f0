"""Shared pieces of the request models: the base class and the number types.

Dory's server validates with pydantic too, so coercion is the same: booleans accept
true/True/1/yes/on (and false/...), integers accept digit strings, unknown fields are
ignored. Field descriptions are written for an agent reading the tool list.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict

StrList = Union[str, list[str]]


def _no_bool(value: Any) -> Any:
    # pydantic's lax mode reads true as 1; a boolean where a number belongs is a client bug.
    if isinstance(value, bool):
        raise ValueError("Input should be a number, not a boolean")
    return value


def _sane_int(value: Any) -> Any:
    value = _no_bool(value)
    text = value.strip().lstrip("+-") if isinstance(value, str) else None
    if text is not None and len(text) > 18:  # a JSON integer of any size is fine (past the end)
        raise ValueError("Input should be an integer of at most 18 digits")
    return value


Int = Annotated[int, BeforeValidator(_sane_int)]
Num = Annotated[float, BeforeValidator(_no_bool)]


class Request(BaseModel):
    """Base: unknown fields ignored (clients send extra fields such as `agent`). Every field
    but an object may also come from the query string; body fields win."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)




class EmptyRequest(Request):
    """An operation without parameters."""
