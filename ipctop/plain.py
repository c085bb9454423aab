"""One typed round trip between a dataclass and the plain dict a record holds.

`to_plain` writes a dataclass's fields in their order (dataclasses.asdict's,
tuples as the lists JSON has, floats untouched: json.dumps writes them as
before, inf and nan included); `from_plain` reads such a dict back through pydantic, per class
once: JSON's lists become the declared tuples, keys an older record lacks
take the field's default, keys a newer one added are dropped, and a value
of the wrong type raises PlainError naming the field. Beside them, the
numbers JSON gives a record's models (`Integer`, `Count`, `Rate`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_T = TypeVar("_T")


def _integral(v: Any) -> Any:
    # JSON has no integer type of its own; 3.0 is a fine integer.
    return int(v) if isinstance(v, float) and v.is_integer() else v


Integer = Annotated[int, BeforeValidator(_integral)]
Count = Annotated[int, BeforeValidator(_integral), Field(ge=0)]
Rate = Annotated[float, Field(ge=0)]


class PlainError(ValueError):
    """A plain dict that does not read as the class asked for."""


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}  # building one walks every field: once


def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(cls)
    return _ADAPTERS[cls]


def to_plain(obj: DataclassInstance) -> dict[str, Any]:
    """The fields, nested dataclasses as dicts and tuples as lists, in declaration order."""
    plain: dict[str, Any] = _lists(asdict(obj))
    return plain


def _lists(v: Any) -> Any:
    # JSON's shape already in Python: the record checks (record_checks.py) read lists.
    if isinstance(v, dict):
        return {k: _lists(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_lists(x) for x in v]
    return v


def from_plain(cls: type[_T], d: object) -> _T:
    """cls rebuilt from to_plain's output (or an older or newer record's)."""
    try:
        value: _T = _adapter(cls).validate_python(d)
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "top level"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise PlainError(f"{cls.__name__}: {where}: {first['msg']}{more}") from e
    return value
