"""What one run is: the one configuration that travels from the CLI to the record.

`RunConfig` is what the engine runs (the workload, where its ends run and
how, its options) and what a record keeps of it (the engine that ran, the
run's timing, what the workload worked out: `as_run`). Its own module so
that workloads can read it without importing the engine that imports them.

The fields every run has are `RunFields`'; each workload's own options
(`Workload.options`) are added from their declarations with the declared
default, so `RunConfig` is made here once, at import. A record holds only
what was said (model_fields_set: the keys it was made or read with), so a
pipe run's record has no `sems` and a record read and written again keeps
its keys; how rounds were timed and the real-time priority are the
engine's alone and never written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..plain import Count, Integer, Rate
from .workloads import OPTIONS, record_payload

# Rounds per timed round by default (why 8: BENCHMARKS.md, "Latency: the cost of timing").
# --latency-every 1 times them all.
LATENCY_EVERY = 8

#: a record's timing of the run; None where it does not apply (a live session
#: has no fixed duration or repeat count, the engine none at all)
TIMING = ("seconds", "warmup", "repeat", "interval")
#: how the engine runs the ends: a record never writes them
ENGINE_OWN = ("latency", "latency_every", "rt")


class RunFields(BaseModel):
    """The fields every run has, whatever its workload, in the order a record writes them.

    The first nine are in every record (an older ipctop requires them); reading
    a record, one missing is a problem. Made in code (`RunConfig("pipe",
    cpus=(0, 1))`), a run has the defaults of __init__ and no timing.
    """

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False)

    workload: str
    placement: str
    mode: str
    engine: str  # asked: auto, native or python; in a record, the engine that ran
    cpus: tuple[Count, ...]
    seconds: Rate | None
    warmup: Rate | None
    repeat: Annotated[Integer, Field(ge=1)] | None
    interval: Rate | None
    think_ns: Integer = 0  # CPU work per round between receive and send (--think-ns)
    size: Integer | None = None  # payload bytes of a message workload (None: its seed's default)

    def __init__(
        self,
        workload: str = "sysv-msg",
        placement: str = "same",
        mode: str = "threads",
        cpus: Sequence[int] = (0,),
        engine: str = "auto",
        **fields: Any,
    ) -> None:
        # A record's keys beyond the fields come in through model_validate; here a
        # misspelt option is refused, as a dataclass would, not kept as an extra.
        unknown = sorted(set(fields) - set(type(self).model_fields))
        if unknown:
            raise TypeError(f"RunConfig has no field {', '.join(unknown)}")
        for key in TIMING:
            fields.setdefault(key, None)
        super().__init__(
            workload=workload, placement=placement, mode=mode, cpus=cpus, engine=engine, **fields
        )

    # pydantic's own marker (RootModel's too): validation, a record's read included,
    # never goes through this signature, so the nine keys stay required and strict.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def as_run(
        self,
        engine: str,
        *,
        seconds: float | None = None,
        warmup: float | None = None,
        repeat: int | None = None,
        interval: float | None = None,
        **more: Any,
    ) -> RunConfig:
        """This run as its record keeps it: the engine that ran, the timing, and what
        the workload says of itself (Workload.record_payload: its options, the
        payload's bytes, what it worked out); `more` is the command's (pairs, window_s)."""
        me = cast("RunConfig", self)  # every instance is one: RunFields is only its base
        return type(me).model_validate(
            {
                "workload": me.workload,
                "placement": me.placement,
                "mode": me.mode,
                "engine": engine,
                "cpus": me.cpus,
                "seconds": seconds,
                "warmup": warmup,
                "repeat": repeat,
                "interval": interval,
                "think_ns": me.think_ns,
                **record_payload(me),
                **more,
                # Carried, never written (exclude=True): the engine's own settings.
                **{k: getattr(me, k) for k in ENGINE_OWN},
            }
        )

    def changed(self, **update: Any) -> RunConfig:
        """This run with some fields changed (dataclasses.replace's part); a key that
        is not a field is refused, as a typo would otherwise become an extra."""
        unknown = sorted(set(update) - set(type(self).model_fields))
        if unknown:
            raise TypeError(f"RunConfig has no field {', '.join(unknown)}")
        return cast("RunConfig", self).model_copy(update=update)

    def recorded(self, key: str) -> bool:
        """Whether the record says what key was (older ones lack the newer keys)."""
        return key in self.said()

    def said(self) -> dict[str, Any]:
        """What a record writes of this run: the keys it was made or read with, as JSON."""
        return self.model_dump(mode="json", exclude_unset=True)


def _run_config() -> type[RunFields]:
    # Any: create_model's keywords are typed; a field's definition is not one of them.
    options: dict[str, Any] = {o.field: (Integer | None, o.default) for o in OPTIONS.values()}
    cls: type[RunFields] = create_model(
        "RunConfig",
        __base__=RunFields,
        __module__=__name__,
        __doc__="What was run, frozen: the workload and its options, where and how its "
        "ends ran, and the run's timing.\n\nKeys a newer ipctop adds are kept as they are.",
        **options,
        # After the workloads' options, as a record writes them: the transport.
        transport=(str | None, None),  # hackbench: socket or pipe; chat: tcp or unix
        # The engine's own (ENGINE_OWN): time rounds in the native ends (latency.py),
        # one in latency_every; the ends' SCHED_FIFO priority (None: normal scheduling).
        latency=(bool, Field(default=True, exclude=True)),
        latency_every=(Integer, Field(default=LATENCY_EVERY, exclude=True)),
        rt=(Integer | None, Field(default=None, exclude=True)),
    )
    return cls


if TYPE_CHECKING:

    class RunConfig(RunFields):
        """RunFields plus every workload's options (threads, sems, queues, ...)."""

        transport: str | None
        latency: bool
        latency_every: int
        rt: int | None

        # RunFields' own: pydantic's dataclass_transform would make one of the fields.
        def __init__(
            self,
            workload: str = ...,
            placement: str = ...,
            mode: str = ...,
            cpus: Sequence[int] = ...,
            engine: str = ...,
            **fields: Any,
        ) -> None: ...

        def __getattr__(self, name: str) -> Any: ...

else:
    RunConfig = _run_config()
