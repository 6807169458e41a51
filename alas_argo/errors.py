"""The project's error hierarchy.

Retry behaviour lives in the types: a :class:`TransientError` may succeed when tried again (a dead S3
endpoint, a lost conditional-write race, a 429 from an LLM endpoint), a :class:`PermanentError` will not
(bad input, an infeasible instance, a broken contract). Every error can carry the place it is about (a file
and a position in it, or a job / step / machine), so that the CLI prints one line that names it.

Third-party errors (botocore ``ClientError``, kubernetes ``ApiException``, httpx errors) are wrapped at the
one boundary that talks to them, chained with ``from e``.
"""

from __future__ import annotations

import errno
from typing import Any

from pydantic import ValidationError

__all__ = [
    "AlasError",
    "ConflictError",
    "ContractError",
    "InfeasibleError",
    "InputError",
    "IntegrityError",
    "LoopGuardTripped",
    "NoSolutionError",
    "PermanentError",
    "StoreError",
    "StoreUnavailable",
    "TransientError",
    "WorkflowError",
    "first_error",
    "write_refused",
]


class AlasError(Exception):
    """Base of every error this project raises on purpose.

    Args:
        message: What went wrong, in one sentence.
        where: The place it is about: a file path, optionally with a position ("ta01.txt line 3"), or
            a structured scope such as ``{"job": 3, "step": 2}``.
    """

    #: Process exit code the CLI uses for this error.
    exit_code: int = 2
    #: Whether trying again may succeed.
    transient: bool = False

    def __init__(self, message: str, *, where: str | dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        if self.where is None:
            return self.message
        if isinstance(self.where, dict):
            scope = ", ".join(f"{k} {v}" for k, v in self.where.items())
            return f"{self.message} ({scope})"
        return f"{self.where}: {self.message}"


class PermanentError(AlasError):
    """Trying again will not help."""


class TransientError(AlasError):
    """Trying again (after a backoff) may succeed."""

    transient = True
    exit_code = 75  # EX_TEMPFAIL: Argo's retryStrategy tells this apart from a permanent failure.


class InputError(PermanentError):
    """A file, flag or document the user gave is malformed or refers to something that does not exist."""


class InfeasibleError(PermanentError):
    """The problem as posed has no solution (e.g. a disruption that leaves no feasible schedule)."""


class NoSolutionError(PermanentError):
    """A solver stopped without any solution (time limit hit before the first feasible point)."""


class ContractError(PermanentError):
    """A node or agent produced output that breaks its declared contract."""


class WorkflowError(PermanentError):
    """An IR workflow is malformed or failed in a way the policies could not absorb."""


class LoopGuardTripped(WorkflowError):
    """A loop ran into its iteration or deadline guard."""


class IntegrityError(PermanentError):
    """Stored records are inconsistent: a broken hash chain, a gap, a dangling plan reference."""

    exit_code = 1


class StoreError(PermanentError):
    """A store refused an operation for a reason that retrying will not fix (e.g. a missing bucket)."""


class ConflictError(TransientError):
    """A conditional update lost to a concurrent writer (e.g. the plan changed under a repair): re-read and
    try again."""


class StoreUnavailable(TransientError):
    """A store could not be reached (connection refused, timeout, 5xx)."""


def first_error(e: ValidationError, default: str = "") -> tuple[str, str]:
    """(dotted location, message) of the first problem pydantic found: what a one-line error names. A
    validator's own message loses pydantic's "Value error, " prefix, which names Python's exception, not the
    problem."""
    err = e.errors()[0]
    return ".".join(str(p) for p in err["loc"]) or default, str(err["msg"]).removeprefix("Value error, ")


#: A write the disk refused for want of room: space may be freed, so trying again later can succeed.
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


def write_refused(e: OSError, message: str, where: str, *, store: bool = False) -> AlasError:
    """The error for a write the system refused with ``e``: ``message`` and the system's reason, at ``where``.

    A full disk or an exhausted quota is transient (exit 75): once space is freed the same command goes on
    where it stopped (a run resumes; a step pod is retried by Argo's retryStrategy, which a permanent error
    would have sent up the escalation ladder instead), as an S3 store answering 507 (full) already was. Any other
    refusal (permission, a read-only filesystem, a name too long) is permanent: an InputError, or with
    ``store`` a StoreError.
    """
    reason = f"{message}: {e.strerror or e}"
    if e.errno in _NO_SPACE:
        return (StoreUnavailable if store else TransientError)(f"{reason} (free space there, then run it again)",
                                                               where=where)
    return (StoreError if store else InputError)(reason, where=where)
