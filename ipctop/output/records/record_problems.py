"""Pydantic's validation errors as the short phrases a record's reader is shown.

"steps[0].pairs is below 1 (0)", not a paragraph per error: a hand-edited
record gets one line naming its first problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_WANT = {
    "float_type": "a number",
    "float_parsing": "a number",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
    "dataclass_exact_type": "an object",
}


def type_name(v: Any) -> str:
    """What JSON calls the value's type."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "list"
    return "object" if isinstance(v, dict) else type(v).__name__


def where(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def phrase(err: Mapping[str, Any]) -> str:
    """One pydantic error dict as "where what"."""
    at = where(err["loc"]) or "top level"
    kind = err["type"]
    v = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return f"{at} is missing"
    if kind in _WANT:
        return f"{at} should be {_WANT[kind]}, not {type_name(v)}"
    if kind == "finite_number":
        return f"{at} is NaN" if v != v else f"{at} is infinite"
    if kind in ("greater_than_equal", "greater_than"):
        if isinstance(v, float) and v != v:  # NaN fails every bound: it is not "negative"
            return f"{at} is NaN"
        bound = ctx.get("ge", ctx.get("gt"))
        return f"{at} is negative ({v})" if bound == 0 else f"{at} is below {bound} ({v})"
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
        return f"{at} should be one of {expected}, not {v!r}"
    if kind.startswith("ipctop_"):
        return f"{at} {err['msg']}"
    return f"{at}: {err['msg']}"
