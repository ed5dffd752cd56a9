"""An interrupt is never a result. Ctrl-C (KeyboardInterrupt) or a job's termination (SystemExit)
must stop the work with nothing written, so the places that turn an exception into a recorded
outcome (a trial's "error" or "solver" label, a baseline's failed prediction, a picture's reason)
re-raise it first with `reraise_interrupt`, also when it hides behind another exception: a SIGINT
that arrives while numba loads a kernel surfaces as SystemError "... returned a result with an
exception set" with the KeyboardInterrupt as its context, which the engine reports as a failed
step."""

from __future__ import annotations

INTERRUPTS = (KeyboardInterrupt, SystemExit)
"""The exceptions that stop the work rather than describe it."""


def interrupt_behind(exc: BaseException) -> BaseException | None:
    """The KeyboardInterrupt or SystemExit that is `exc` or in its chain of causes and contexts
    (`__cause__`, `__context__`), else None."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        if isinstance(current, INTERRUPTS):
            return current
        seen.add(id(current))
        pending += [current.__cause__, current.__context__]
    return None


def reraise_interrupt(exc: BaseException) -> None:
    """Raise the interrupt behind `exc` (`interrupt_behind`), if any; else return."""
    interrupt = interrupt_behind(exc)
    if interrupt is not None:
        raise interrupt
