"""Flag values: what argparse's ``type=float`` lets through and no command can use, and a settings model's
refusal of a flag's value, named by the flag."""

from __future__ import annotations

import argparse
import math
from enum import Enum
from typing import TypeVar

from pydantic import ValidationError

from alas_argo.errors import InputError
from alas_argo.seeds import MAX_SEED

E = TypeVar("E", bound=Enum)

__all__ = ["at_least", "counts", "finite_float", "flag_error", "members", "plan_version", "seed"]


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


def at_least(value: int, flag: str, minimum: int) -> None:
    """Refuse an integer flag below ``minimum`` (a worker count, a number of rounds).

    Raises:
        InputError: ``value`` is below ``minimum``; the message names the flag.
    """
    if value < minimum:
        raise InputError(f"{flag} must be at least {minimum}, got {value}")


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
    if not digits.isdigit():
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
    return out


def counts(text: str, flag: str, *, minimum: int = 1) -> list[int]:
    """A comma-separated list of whole numbers of at least ``minimum`` (``--events 10,100``).

    Raises:
        InputError: an entry that is not a whole number, or is below ``minimum``, named with the flag.
    """
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.lstrip("-").isdigit():
            raise InputError(f"{flag}: takes whole numbers such as 10,100, got {part!r}")
        if int(part) < minimum:
            raise InputError(f"{flag}: must be at least {minimum}, got {part}")
        out.append(int(part))
    return out


def flag_error(e: ValidationError) -> InputError:
    """The first error of a model built from flags whose fields are the flags' names (``repair_effort`` for
    ``--repair-effort``), as one line naming the flag: "--repair-effort: Input should be greater than 0"."""
    first = e.errors()[0]
    flag = "--" + str(first["loc"][0]).replace("_", "-") if first["loc"] else "a flag"
    return InputError(f"{flag}: {first['msg']}")
