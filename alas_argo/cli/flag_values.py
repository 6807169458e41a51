"""Flag values: what argparse's ``type=float`` lets through and no command can use, and a settings model's
refusal of a flag's value, named by the flag."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from enum import Enum
from typing import TypeVar

from pydantic import ValidationError

from alas_argo.bounds import MAX_WAIT_SECONDS
from alas_argo.errors import InputError, first_error
from alas_argo.log.layout import check_run_id
from alas_argo.repeats import repeated
from alas_argo.seeds import MAX_SEED

#: A whole number as ``counts`` reads it, sign included so that ``-3`` is refused as out of range. ``str.isdigit``
#: took ``--3`` (after ``lstrip("-")``) and ``²``, which ``int()`` then refused with a ValueError traceback.
_WHOLE = re.compile(r"-?[0-9]+")

E = TypeVar("E", bound=Enum)
T = TypeVar("T")

__all__ = ["MAX_PORT", "MAX_REPEATS", "MAX_SEEDS", "counts", "finite_float", "flag_error", "members", "plan_version",
           "run_id", "seconds", "seed", "share", "whole"]

#: Most seeds or trials a bench takes: each one is a row per case and variant, kept in memory until the tables
#: are written (``bench llm --seeds 100000`` on one instance held 4 GB; a trillion ended in a MemoryError).
MAX_SEEDS = 10_000
#: Most repetitions of a timing loop (``bench validator --repeat``, ``bench log --appends``): a hundred times the
#: most any command in bench/README.md uses (1,000 nodes or events), and still minutes, not years.
MAX_REPEATS = 100_000
#: The last TCP port.
MAX_PORT = 65_535


def finite_float(text: str) -> float:
    """``type=`` of every float flag: a finite number. ``float()`` alone accepts ``nan`` and ``inf``, and a
    NaN passes every ``<= 0`` check after it (``nan <= 0`` is false), so a NaN time limit used to run.

    Raises:
        argparse.ArgumentTypeError: not a number, or not finite (argparse prints it with the flag, exit 2).
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def seconds(text: str) -> float:
    """``type=`` of a flag that is a wait (a timeout, a polling interval, an age): a number of seconds above 0
    and at most :data:`~alas_argo.bounds.MAX_WAIT_SECONDS`. The operator's ``--interval 0`` (or -5) polled the
    API server in a hot loop, and ``--interval 1e12`` ended in an OverflowError after the first pass.

    Raises:
        argparse.ArgumentTypeError: not a finite number, or out of that range.
    """
    value = finite_float(text)
    if not 0 < value <= MAX_WAIT_SECONDS:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most {MAX_WAIT_SECONDS:.0f} seconds (a year), "
                                         f"got {text}")
    return value


def share(text: str) -> float:
    """``type=`` of a flag that is a share or a probability: a number from 0 to 1.

    Raises:
        argparse.ArgumentTypeError: not a finite number, or outside [0, 1].
    """
    value = finite_float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text}")
    return value


def whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """``type=`` of an integer flag that counts something (workers, seeds, trials, repeats, a port): a whole
    number from ``minimum`` to ``maximum`` (``None``: no upper bound, for a count that only limits output).
    ``type=int`` let any value through, and each command checked the lower bound its own way or not at all:
    ``bench runtime --repeats -1`` ended in a KeyError, ``metrics serve --port 99999`` in an OverflowError, and
    ``bench llm --seeds 1000000000000`` in a MemoryError.

    Raises:
        argparse.ArgumentTypeError: not a whole number, or out of that range (argparse prints it with the
            flag, exit 2, before any work).
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            span = f"at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"must be {span}, got {text}")
        return value

    return parse


def seed(text: str) -> int:
    """``type=`` of every seed flag: an integer from 0 to :data:`~alas_argo.seeds.MAX_SEED` (CP-SAT's seeds are
    32-bit; a larger one used to end in a traceback from the solver's bindings).

    Raises:
        argparse.ArgumentTypeError: not an integer, or out of that range.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"a seed is an integer from 0 to {MAX_SEED}, got {text}")
    return value


def plan_version(text: str) -> int:
    """``type=`` of a plan version argument: ``2`` or ``v2``, as the log prints versions ("current: v2").

    Raises:
        argparse.ArgumentTypeError: neither form.
    """
    digits = text[1:] if text[:1] in ("v", "V") else text
    if not digits.isascii() or not digits.isdigit():  # "²" is a digit to isdigit, not to int()
        raise argparse.ArgumentTypeError(f"not a plan version (a number, or v and a number, as in v2): {text!r}")
    return int(digits)


def members(text: str, enum: type[E], flag: str) -> list[E]:
    """A comma-separated list of ``enum``'s values (``--variants alas,no_repair``), each one known.

    Raises:
        InputError: an unknown or empty entry, named with the flag and the known values.
    """
    out = []
    for part in text.split(","):
        try:
            out.append(enum(part.strip()))
        except ValueError:
            known = ", ".join(str(m.value) for m in enum)
            raise InputError(f"{flag}: unknown value {part.strip()!r}; known: {known}") from None
    return _once(out, flag)


def counts(text: str, flag: str, *, minimum: int = 1, maximum: int = MAX_REPEATS) -> list[int]:
    """A comma-separated list of whole numbers from ``minimum`` to ``maximum`` (``--events 10,100``).

    Raises:
        InputError: an entry that is not a whole number, or is out of that range, named with the flag.
    """
    out = []
    for part in text.split(","):
        part = part.strip()
        if not _WHOLE.fullmatch(part):
            raise InputError(f"{flag}: takes whole numbers such as 10,100, got {part!r}")
        if not minimum <= int(part) <= maximum:
            raise InputError(f"{flag}: must be from {minimum} to {maximum}, got {part}")
        out.append(int(part))
    return _once(out, flag)


def _once(values: list[T], flag: str) -> list[T]:
    """``values`` when none repeats; a repeat would be run twice and counted twice in the tables."""
    twice = repeated(values)
    if twice:
        raise InputError(f"{flag}: {', '.join(twice)} given more than once")
    return values


def run_id(text: str) -> str:
    """A run id as the log takes it (``--run-id``): an empty one, from an unset shell variable, started a new
    run under a fresh id instead of resuming the one meant."""
    try:
        return check_run_id(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def flag_error(e: ValidationError) -> InputError:
    """The first error of a model built from flags whose fields are the flags' names (``repair_effort`` for
    ``--repair-effort``), as one line naming the flag: "--repair-effort: Input should be greater than 0"."""
    field, msg = first_error(e)
    flag = "--" + field.split(".")[0].replace("_", "-") if field else "a flag"
    return InputError(f"{flag}: {msg}")
