"""Parsers for instance files: Taillard's format, the OR-Library format, and the JSON of docs/contracts.md.

Every parse error is an :class:`~alas_argo.errors.InputError` naming the file and the line.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from alas_argo.errors import InputError, first_error
from alas_argo.file_names import read_limited
from alas_argo.json_limits import MAX_INT_DIGITS, load_json
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.limits import MAX_TIME

__all__ = ["InstanceFormat", "parse_instance_json", "parse_instance_text", "parse_orlib", "parse_taillard",
           "read_instance_file"]


class InstanceFormat(StrEnum):
    """Instance file formats understood by :func:`parse_instance_text`."""

    JSON = "json"
    TAILLARD = "taillard"
    ORLIB = "orlib"


def _numeric_lines(text: str, where: str) -> list[tuple[int, list[int]]]:
    """(line number, integers) for each line made only of numbers; a stray non-integer number fails."""
    rows: list[tuple[int, list[int]]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        tokens = raw.replace(",", " ").split()
        if not tokens:
            continue
        if not _looks_numeric(tokens[0]):
            continue  # a header or comment line ("instance ft06", "Times", "+++")
        values = []
        for t in tokens:
            if len(t) > MAX_INT_DIGITS:  # before int(): Python refuses 4,300 digits with a ValueError of its own
                raise InputError(f"number {t[:20]}... is too long ({len(t)} characters)",
                                 where=f"{where} line {lineno}")
            try:
                values.append(int(t))
            except ValueError:
                raise InputError(f"{t[:40]!r} is not an integer", where=f"{where} line {lineno}") from None
        rows.append((lineno, values))
    return rows


def _looks_numeric(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _header(rows: list[tuple[int, list[int]]], where: str) -> tuple[int, int, list[tuple[int, list[int]]]]:
    if not rows:
        raise InputError("no numeric data found (expected a 'jobs machines' header line)", where=where)
    lineno, head = rows[0]
    if len(head) < 2:
        raise InputError("header must start with 'jobs machines'", where=f"{where} line {lineno}")
    n, m = head[0], head[1]
    if n <= 0 or m <= 0 or n > 100_000 or m > 10_000:
        raise InputError(f"implausible size {n} jobs x {m} machines", where=f"{where} line {lineno}")
    return n, m, rows[1:]



def _duration(d: int, where: str) -> int:
    """``d`` if it is a duration an instance may hold; else an InputError naming the line (the Instance model
    refuses it too, but with a pydantic error, which the CLI would show as a traceback)."""
    if d < 0:
        raise InputError(f"negative duration {d}", where=where)
    if d > MAX_TIME:
        raise InputError(f"duration {d} is too large (at most {MAX_TIME})", where=where)
    return d

def parse_taillard(text: str, *, name: str, where: str = "<text>") -> Instance:
    """Taillard's format: ``n m [seeds bounds]``, then an n x m times matrix, then an n x m machines matrix
    (machines numbered from 1, as Taillard publishes them; 0-based files are accepted too).

    A matrix's rows may wrap across lines, but each matrix ends at the end of a line; numbers after the
    machines matrix are not read (Taillard's files hold ten instances each)."""
    n, m, rows = _header(_numeric_lines(text, where), where)
    values = [(ln, v) for ln, row in rows for v in row]
    if len(values) < 2 * n * m:
        last = rows[-1][0] if rows else "end"
        raise InputError(f"truncated: expected {2 * n * m} numbers after the header, found {len(values)}",
                         where=f"{where} line {last}")
    for end, matrix in ((n * m, "times"), (2 * n * m, "machines")):
        # Rows may wrap, but a matrix ends with its line: one that ends inside a line has a number missing or
        # extra, and read as it stands it would shift the numbers after it into the wrong operations.
        if end < len(values) and values[end][0] == values[end - 1][0]:
            raise InputError(f"the {n} x {m} {matrix} matrix ends inside this line: a number is missing or extra "
                             f"(what follows a matrix starts on a new line)", where=f"{where} line {values[end][0]}")
    times = values[: n * m]
    machines = values[n * m: 2 * n * m]
    one_based = min(v for _, v in machines) >= 1
    jobs = []
    for j in range(n):
        ops = []
        for s in range(m):
            (tl, d), (ml, written) = times[j * m + s], machines[j * m + s]
            mach = written - 1 if one_based else written
            if not 0 <= mach < m:
                # The number as the file writes it, in the file's own numbering.
                numbering = f"1..{m} (this file numbers machines from 1)" if one_based else f"0..{m - 1}"
                raise InputError(f"machine {written} outside {numbering}", where=f"{where} line {ml}")
            ops.append((mach, _duration(d, f"{where} line {tl}")))
        jobs.append(ops)
    return Instance(name=name, jobs=jobs)


def parse_orlib(text: str, *, name: str, where: str = "<text>") -> Instance:
    """OR-Library format: ``n m``, then one line per job of ``m`` ``machine duration`` pairs (machines from 0).

    Rows after the n-th job are not read (a file may hold more than one instance, as the OR-Library's do)."""
    n, m, rows = _header(_numeric_lines(text, where), where)
    if len(rows) < n:
        last = rows[-1][0] if rows else "end"
        raise InputError(f"truncated: expected {n} job lines, found {len(rows)}", where=f"{where} line {last}")
    jobs = []
    for j, (lineno, row) in enumerate(rows[:n]):
        if len(row) != 2 * m:
            # The format has one row of m pairs per job: a short or long row is a truncated, wrapped or merged
            # line, and read as it stands it would shift every later job without a word.
            raise InputError(f"job {j}: expected {m} machine/duration pairs ({2 * m} numbers, the header's "
                             f"{m} machines), found {len(row)} numbers; jobs of other lengths need the JSON "
                             f"format", where=f"{where} line {lineno}")
        ops = []
        for mach, d in zip(row[::2], row[1::2], strict=True):
            if not 0 <= mach < m:
                raise InputError(f"machine {mach} outside 0..{m - 1}", where=f"{where} line {lineno}")
            ops.append((mach, _duration(d, f"{where} line {lineno}")))
        jobs.append(ops)
    return Instance(name=name, jobs=jobs)


def parse_instance_json(doc: Any, *, where: str = "<json>") -> Instance:
    """The instance JSON of docs/contracts.md (already decoded)."""
    if not isinstance(doc, dict):
        raise InputError(f"expected a JSON object, found {type(doc).__name__}", where=where)
    try:
        return Instance.model_validate(doc)
    except ValidationError as e:
        loc, msg = first_error(e)
        raise InputError(f"{loc}: {msg}", where=where) from None
    except InputError as e:
        raise InputError(str(e), where=where) from None


def parse_instance_text(text: str, *, name: str, where: str = "<text>",
                        fmt: InstanceFormat | None = None) -> Instance:
    """Parse any supported format, detecting it when ``fmt`` is not given.

    Detection: a document starting with ``{`` is JSON; otherwise a first job row of ``2 * machines``
    numbers is the OR-Library format and one of ``machines`` numbers is Taillard's.
    """
    if fmt is not None or text.lstrip()[:1] in ("{", "["):
        return _parse(text, name, where, fmt or InstanceFormat.JSON)
    _, m, rows = _header(_numeric_lines(text, where), where)
    first = len(rows[0][1]) if rows else 0
    fmt = InstanceFormat.ORLIB if first == 2 * m else InstanceFormat.TAILLARD
    try:
        return _parse(text, name, where, fmt)
    except InputError as e:
        # A guessed format's error can mislead (an OR-Library file with wrapped rows fails as Taillard's with
        # "machine 4 outside 0..2"): say what the guess was and why.
        if fmt is InstanceFormat.ORLIB:
            guess = f"the OR-Library format: its first job row has {first} numbers, 2 x {m} machines"
        else:
            guess = (f"Taillard's format: its first job row has {first} numbers, not the 2 x {m} of an OR-Library "
                     "row, one job per line of machine/duration pairs")
        raise InputError(f"{e.message} (read as {guess})", where=e.where) from None


def _parse(text: str, name: str, where: str, fmt: InstanceFormat) -> Instance:
    if fmt is InstanceFormat.JSON:
        return parse_instance_json(load_json(text, where=where), where=where)
    if fmt is InstanceFormat.ORLIB:
        return parse_orlib(text, name=name, where=where)
    return parse_taillard(text, name=name, where=where)


def read_instance_file(path: Path, fmt: InstanceFormat | None = None) -> Instance:
    """Read and parse an instance file; the instance is named after the file's stem unless JSON names it."""
    try:
        text = read_limited(path).decode("utf-8-sig")  # -sig: a byte order mark is not a comment line
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", where=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", where=str(path)) from None
    return parse_instance_text(text, name=path.stem, where=str(path), fmt=fmt)
