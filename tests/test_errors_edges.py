"""The error hierarchy (alas_argo.errors) on its own: what each error prints, where it points, the exit code the
CLI returns for it and whether it is transient. Argo sees nothing but the exit code, so the retry expressions
of the Argo compiler (alas_argo.engines.argo_names) must give each class the code it really exits with: a
class retried locally on its name would otherwise be retried on Argo on another class's code."""

from __future__ import annotations

import errno
import os
import pickle

import pytest
from pydantic import BaseModel, ValidationError, field_validator, model_validator

from alas_argo import errors
from alas_argo.engines.argo_names import retry_expression, retry_names
from alas_argo.errors import (
    AlasError,
    ConflictError,
    ContractError,
    InfeasibleError,
    InputError,
    IntegrityError,
    LoopGuardTripped,
    NoSolutionError,
    PermanentError,
    StoreError,
    StoreUnavailable,
    TransientError,
    WorkflowError,
    first_error,
    write_refused,
)

#: (class, its direct base, exit code, transient), as docs/architecture.md "Errors and exit codes" gives them.
_TABLE: list[tuple[type[AlasError], type[Exception], int, bool]] = [
    (AlasError, Exception, 2, False),
    (PermanentError, AlasError, 2, False),
    (TransientError, AlasError, 75, True),
    (InputError, PermanentError, 2, False),
    (InfeasibleError, PermanentError, 2, False),
    (NoSolutionError, PermanentError, 2, False),
    (ContractError, PermanentError, 2, False),
    (WorkflowError, PermanentError, 2, False),
    (LoopGuardTripped, WorkflowError, 2, False),
    (IntegrityError, PermanentError, 1, False),
    (StoreError, PermanentError, 2, False),
    (ConflictError, TransientError, 75, True),
    (StoreUnavailable, TransientError, 75, True),
]


def test_the_table_covers_every_exported_error() -> None:
    assert {cls.__name__ for cls, *_ in _TABLE} == set(errors.__all__) - {"first_error", "write_refused"}


@pytest.mark.parametrize(("cls", "base", "code", "transient"), _TABLE, ids=[c.__name__ for c, *_ in _TABLE])
def test_each_class_has_its_documented_base_exit_code_and_retry_class(
        cls: type[AlasError], base: type[Exception], code: int, transient: bool) -> None:
    assert cls.__bases__ == (base,)
    error = cls("it broke")
    assert (error.exit_code, error.transient) == (code, transient)
    # The retry class and the base agree: every transient error is a TransientError and nothing else is.
    assert isinstance(error, TransientError) is transient and isinstance(error, PermanentError) is (
        not transient and cls is not AlasError)


@pytest.mark.parametrize(("cls", "base", "code", "transient"), _TABLE[1:], ids=[c.__name__ for c, *_ in _TABLE[1:]])
def test_argo_retries_each_class_on_the_exit_code_it_exits_with(
        cls: type[AlasError], base: type[Exception], code: int, transient: bool) -> None:
    policy, expression = retry_expression([cls.__name__])
    assert policy == "Always" and expression is not None
    assert f"asInt(lastRetry.exitCode) == {code}" in expression.split(" || ")
    # Read back, the expression names a class the error is an instance of (its canonical class on Argo).
    (canonical,) = retry_names(policy, expression)
    assert isinstance(cls("x"), getattr(errors, canonical))


def test_the_three_printed_forms() -> None:
    assert str(InputError("no such instance")) == "no such instance"
    assert str(InputError("not a number", where="ta01.txt line 3")) == "ta01.txt line 3: not a number"
    # A structured scope follows the message, its keys in the order given.
    assert str(InfeasibleError("no room", where={"job": 3, "step": 2})) == "no room (job 3, step 2)"
    assert str(ContractError("bad output", where={"node": "plan"})) == "bad output (node plan)"


def test_message_and_where_are_kept_as_given() -> None:
    scope = {"machine": 4}
    error = StoreError("refused", where=scope)
    assert error.message == "refused" and error.where is scope and error.args == ("refused",)
    bare = IntegrityError("gap at seq 7")
    assert bare.where is None and bare.args == ("gap at seq 7",)


def test_an_error_survives_pickling_with_its_place() -> None:
    """Errors cross process boundaries (timed agents run in child processes): the place must come along."""
    for error in (InputError("bad flag", where="--seed"), ConflictError("lost", where={"run": "r1"})):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error) and back.where == error.where


class _Inner(BaseModel):
    size: int


class _Outer(BaseModel):
    name: str
    inner: _Inner

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if value == "bad":
            raise ValueError("name must not be bad")
        return value

    @model_validator(mode="after")
    def _whole(self) -> _Outer:
        if self.name == "whole":
            raise ValueError("the whole model is wrong")
        return self


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Outer.model_validate(data)
    return info.value


def test_first_error_names_the_dotted_place_of_the_first_problem() -> None:
    # Two problems: the first one (name missing) is named, not the nested one.
    assert first_error(_error({"inner": {"size": "x"}})) == ("name", "Field required")
    loc, msg = first_error(_error({"name": "ok", "inner": {"size": "x"}}))
    assert loc == "inner.size" and msg.startswith("Input should be a valid integer")


def test_first_error_drops_pydantics_value_error_prefix_only_at_the_start() -> None:
    assert first_error(_error({"name": "bad", "inner": {"size": 1}})) == ("name", "name must not be bad")


def test_first_error_falls_back_to_the_default_place_for_a_whole_model_problem() -> None:
    whole = _error({"name": "whole", "inner": {"size": 1}})
    assert first_error(whole, "body") == ("body", "the whole model is wrong")
    assert first_error(whole) == ("", "the whole model is wrong")
    # A problem with a place keeps it, whatever the default.
    assert first_error(_error({"name": "bad", "inner": {"size": 1}}), "body")[0] == "name"


@pytest.mark.parametrize(("code", "store", "cls"), [
    (errno.ENOSPC, False, TransientError), (errno.EDQUOT, False, TransientError),
    (errno.ENOSPC, True, StoreUnavailable), (errno.EDQUOT, True, StoreUnavailable),
    (errno.EACCES, False, InputError), (errno.EROFS, False, InputError), (errno.ENAMETOOLONG, False, InputError),
    (errno.EACCES, True, StoreError), (errno.EROFS, True, StoreError)])
def test_a_refused_write_is_transient_only_for_want_of_room(code: int, store: bool, cls: type[AlasError]) -> None:
    """A full disk used to be exit 2 like a read-only one: a step pod whose disk filled up climbed the
    escalation ladder instead of being retried, and a local run said "bad input"."""
    error = write_refused(OSError(code, os.strerror(code)), "cannot write record", "/data/x.json", store=store)
    assert type(error) is cls and error.where == "/data/x.json"
    room = code in (errno.ENOSPC, errno.EDQUOT)
    assert error.message == f"cannot write record: {os.strerror(code)}" + (
        " (free space there, then run it again)" if room else "")
    assert error.exit_code == (75 if room else 2)


def test_a_refused_write_without_a_reason_names_the_error_itself() -> None:
    error = write_refused(OSError("the disk went away"), "cannot write", "out")
    assert (type(error), error.message) == (InputError, "cannot write: the disk went away")
