"""A step's profile in a record: engine.profile.Profile in memory, its to_dict in the file.

A profile read back is the engine's recorded kind (symbols and totals, no raw
windows), which writes what it read.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from ipctop.engine.profile import Profile


def _profile(v: Any) -> Profile:
    # A record's profile is written by Profile.to_dict; record_checks names what is
    # wrong with a bad one, here it only has to fail instead of raising.
    if isinstance(v, Profile):
        return v
    if not isinstance(v, dict):
        raise PydanticCustomError("dict_type", "should be an object")
    try:
        return Profile.from_dict(v)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise PydanticCustomError("ipctop_profile", f"is not a profile ({e})") from None


# engine.profile.Profile in memory, its to_dict in the file (a read one: _RecordedProfile).
StepProfile = Annotated[
    Profile,
    PlainValidator(_profile),
    PlainSerializer(lambda p: p.to_dict()),
    WithJsonSchema(
        {"type": "object", "title": "Profile", "description": "engine.profile.Profile.to_dict"}
    ),
]
