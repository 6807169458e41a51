"""Shared plumbing of the command modules: nested command groups and output helpers."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from alas_argo import interrupts
from alas_argo.cli.examples import epilog
from alas_argo.cli.progress import ProgressLines
from alas_argo.errors import InputError, write_refused
from alas_argo.file_names import read_limited
from alas_argo.json_limits import load_json

__all__ = ["Commands", "Handler", "add_instance_argument", "print_json", "read_json_file", "resolve_instance",
           "run_with_progress", "write_json_file"]

T = TypeVar("T")

Handler = Callable[[argparse.Namespace], int]


class Commands:
    """Top-level subcommands plus named groups (`alas bench static`, `alas log ls`) that several modules
    may add commands to."""

    def __init__(self, subparsers: Any) -> None:
        self._sub = subparsers
        self._groups: dict[str, Any] = {}

    def add(self, name: str, handler: Handler, *, help: str, description: str | None = None,
            group: str | None = None, stoppable: bool = False,
            interrupted_exit: int | None = None) -> argparse.ArgumentParser:
        """Add a command (to ``group`` when given) and return its parser for arguments.

        ``stoppable`` commands (the ones that solve or repair) turn SIGINT and SIGTERM into a clean stop of the
        search in progress (:mod:`alas_argo.interrupts`) and exit 130 or 143, or ``interrupted_exit`` when
        given (`alas step`: 75, so that Argo runs a step whose pod was stopped again).
        """
        target = self.group(group) if group else self._sub
        parser: argparse.ArgumentParser = target.add_parser(
            name, help=help, description=description or help, epilog=epilog(f"{group} {name}" if group else name),
            formatter_class=argparse.RawDescriptionHelpFormatter)
        # command_parser: an unknown option is reported with this command's usage, not the top level's.
        parser.set_defaults(handler=handler, command_parser=parser, stoppable=stoppable,
                            interrupted_exit=interrupted_exit)
        return parser

    def group(self, name: str, help: str | None = None) -> Any:
        """The subparsers of group ``name``, created on first use."""
        if name not in self._groups:
            parser = self._sub.add_parser(name, help=help or f"{name} commands",
                                          description=help or f"{name} commands", epilog=epilog(name),
                                          formatter_class=argparse.RawDescriptionHelpFormatter)
            parser.set_defaults(handler=lambda _args, p=parser: (p.print_help(sys.stderr), 2)[1],
                                command_parser=parser)
            self._groups[name] = parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND")
        return self._groups[name]


def add_instance_argument(parser: argparse.ArgumentParser, *, help: str, metavar: str = "INSTANCE") -> None:
    """The instance as a word (``alas validate ft06 ...``, as ``alas solve ft06``) or as ``--instance``: one of
    the two is required (:func:`resolve_instance` checks after parsing)."""
    parser.add_argument("instance_word", nargs="?", metavar=metavar, help=f"{help} (or --instance)")
    parser.add_argument("--instance", metavar=metavar, default=None, help=f"{help} (or the word {metavar})")


def resolve_instance(args: argparse.Namespace) -> None:
    """Settle ``args.instance`` from the word or the flag :func:`add_instance_argument` added; a usage error
    (exit 2) when neither is given or they name different instances."""
    if not hasattr(args, "instance_word"):
        return
    word, flag = args.instance_word, args.instance
    if word is not None and flag is not None and word != flag:
        args.command_parser.error(f"the word {word!r} and --instance {flag!r} name different instances: give one")
    if word is None and flag is None:
        args.command_parser.error("an instance is required: a bundled name (ft06, ta01) or an instance file, "
                                  "as a word or as --instance")
    args.instance = word if word is not None else flag


def print_json(doc: Any) -> None:
    """Print a JSON document for machines (stdout, sorted keys off, two-space indent)."""
    sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")


def read_json_file(path: str | Path, what: str) -> Any:
    """Read a JSON document, turning every failure into an InputError naming the file and place."""
    p = Path(path)
    try:
        text = read_limited(p).decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} file not found", where=str(p)) from None
    except OSError as e:
        raise InputError(f"cannot read {what} file: {e.strerror}", where=str(p)) from None
    except UnicodeDecodeError:
        raise InputError(f"{what} file is not UTF-8 text", where=str(p)) from None
    try:
        return load_json(text, where=str(p))
    except InputError as e:
        raise InputError(e.message.replace("invalid JSON", f"invalid JSON in {what} file", 1), where=e.where
                         ) from None


def write_json_file(path: str | Path, doc: Any) -> None:
    """Write a JSON document atomically (temp file, fsynced, then renamed): neither a crash nor a power loss
    leaves half a file in its place."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(json.dumps(doc, indent=1) + "\n")
            fh.flush()
            os.fsync(fh.fileno())  # the data on disk before the name points at it
        tmp.replace(p)
    except OSError as e:  # the place was checked up front; this catches a disk that filled up since
        with contextlib.suppress(OSError):  # no half-written temp file left beside the user's files
            tmp.unlink(missing_ok=True)
        raise write_refused(e, "cannot write", str(p)) from None


def run_with_progress(run: Callable[[Callable[[T], None] | None], list[T]], *, total: int, first: str,
                      label: Callable[[T], str], quiet: bool, what: str = "alas") -> list[T]:
    """Call ``run(on_row)`` with a progress bar over ``total`` rows on stderr; when stderr is not a terminal,
    with periodic progress lines instead (:class:`~alas_argo.cli.progress.ProgressLines`: CI logs show the work
    moving); plainly when ``quiet`` on a terminal. A stop request (SIGINT, SIGTERM) ends the work after the row
    in hand (:class:`~alas_argo.interrupts.Interrupted`): rows that never reach a solver (a simulated model's
    cases) would otherwise never see it, and the process ran on until killed."""

    def checked(show: Callable[[T], None] | None) -> Callable[[T], None]:
        def on_row(row: T) -> None:
            if show is not None:
                show(row)
            interrupts.check(what)

        return on_row

    if not sys.stderr.isatty():
        with ProgressLines(what, total=total) as lines:
            return run(checked(lambda row: lines.done(label(row))))
    if quiet:
        return run(checked(None))
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True)) as bar:
        task = bar.add_task(first, total=total)
        return run(checked(lambda row: bar.update(task, advance=1, description=label(row))))
