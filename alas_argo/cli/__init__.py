"""The `alas` command: parse, call the library, print.

Each command group lives in its own module with a ``register(commands)`` function; this module wires them
and turns the project's errors into one-line messages and meaningful exit codes:

- 0 success, 1 a negative verdict (invalid plan, tampered log), 2 bad input or usage,
- 75 a transient failure (retrying may help), 130 / 143 interrupted by SIGINT / SIGTERM (commands that solve
  or repair stop their search cleanly; see :mod:`alas_argo.interrupts`), except `alas step`, the workflow
  pods' entrypoint: there a stop is the pod being deleted, evicted or drained, and exits 75 so Argo retries it.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
from collections.abc import Callable, Sequence

from alas_argo import __version__, interrupts
from alas_argo.cli.app import Commands, resolve_instance
from alas_argo.cli.examples import epilog
from alas_argo.errors import AlasError
from alas_argo.scrubbing import ScrubbingStream

__all__ = ["COMMAND_MODULES", "COMMAND_WORDS", "build_parser", "main"]

#: Command modules, in the order their commands appear in `alas --help`.
COMMAND_MODULES = (
    "instances", "solving", "validating", "repairing", "running", "ir_commands", "logs", "engines_commands",
    "stepping", "serving", "smoke_command", "llm_commands", "benching", "ablation_commands",
)


#: Each top-level command word and the modules that register it, in COMMAND_MODULES order: a command line that
#: names a command builds only its modules' parsers, so it does not import every other command's libraries
#: (tests/cli/test_help.py derives this table from the modules and holds it equal).
COMMAND_WORDS: dict[str, tuple[str, ...]] = {
    "instance": ("instances",), "solve": ("solving",), "validate": ("validating",),
    "bench": ("validating", "repairing", "ir_commands", "logs", "llm_commands", "benching", "ablation_commands"),
    "disrupt": ("repairing",), "repair": ("repairing",), "gantt": ("repairing",), "run": ("running",),
    "ir": ("ir_commands",), "log": ("logs",), "replay": ("logs",), "engines": ("engines_commands",),
    "render": ("engines_commands",), "submit": ("engines_commands",), "step": ("stepping",),
    "controller": ("serving",), "metrics": ("serving",), "operator": ("serving",), "smoke": ("smoke_command",),
    "llm": ("llm_commands",),
}

#: Top-level modules of the `cluster` extra (see pyproject.toml).
_CLUSTER_MODULES = {"hera", "boto3", "botocore", "kubernetes"}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `alas` argument parser: the full one, or, for a command line ``argv`` whose first word is a known
    command, one with only the modules that register that command (what it parses is the same)."""
    parser = argparse.ArgumentParser(
        prog="alas",
        description="ALAS: a transactional, disruption-aware multi-agent planner for job-shop schedules. "
        "Plans are proposed by agents, checked by an independent validator, stored as immutable versions "
        "in an append-only log, and repaired locally when the world changes.",
        epilog=epilog(""), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"alas {__version__}")
    commands = Commands(parser.add_subparsers(dest="command", metavar="COMMAND"))
    # Groups that several modules add to get their help text here, before any module creates them.
    commands.group("bench", "Benchmarks: static planning, repair, ablation, validator, runtime, log, LLM. Each "
                   "writes its tables and prints the figures with the command that produced them.")
    for name in _modules_for(argv):
        module = importlib.import_module(f"alas_argo.cli.{name}")
        module.register(commands)
    return parser


def _modules_for(argv: Sequence[str] | None) -> tuple[str, ...]:
    """The command modules a parser for ``argv`` needs: those of its command word when it comes first, else all
    of them (`alas --help`, `alas -h run`, no command, an unknown word: the top level lists every command)."""
    return COMMAND_WORDS.get(argv[0], COMMAND_MODULES) if argv else COMMAND_MODULES


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `alas` console script; returns the exit code."""
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    args, extras = parser.parse_known_args(argv)
    if extras:  # argparse would blame the top level; the command that got them prints its own usage
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    resolve_instance(args)
    # A warning a library logs (a head the store did not take, a metrics report skipped) reads like the CLI's own
    # lines: logging's handler of last resort printed the bare message, which read as part of the next line.
    logging.lastResort = _LAST_RESORT
    # Whatever a command prints passes through a scrubber: a configured secret echoed back by a third party
    # (an LLM endpoint's 401 body, say) never reaches the terminal or a CI log.
    streams = sys.stdout, sys.stderr
    scrubbing = ScrubbingStream(sys.stdout), ScrubbingStream(sys.stderr)
    sys.stdout, sys.stderr = scrubbing
    try:
        return _run(handler, args)
    finally:
        sys.stdout, sys.stderr = streams
        for stream in scrubbing:
            stream.flush()  # what a scrubbing stream held back (it could have begun a secret) is written now


class _Diagnostics(logging.Handler):
    """Where a warning goes when no logging is configured (every command but the servers): stderr, at the time
    of the warning (a test's or a scrubber's stream), as ``alas: warning: <message>``."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(f"alas: {record.levelname.lower()}: {record.getMessage()}\n")
        except Exception:  # logging's own rule: a handler never raises into its caller
            self.handleError(record)


_LAST_RESORT = _Diagnostics()


def _run(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    # A command's own exit code for a stop request (`alas step`: 75), and what it means.
    own_exit: int | None = getattr(args, "interrupted_exit", None)
    note = f" (exit {own_exit}: transient, the step may run again)" if own_exit else ""
    try:
        if not getattr(args, "stoppable", False):
            return int(handler(args) or 0)
        with interrupts.handling_signals():
            code = int(handler(args) or 0)
            if (signum := interrupts.stop_requested()) is not None:
                # The signal came when the work was already done: the result stands, the exit code says it.
                print(f"alas: interrupted by {signal.Signals(signum).name} after the work was done{note}",
                      file=sys.stderr)
                return own_exit or 128 + signum
            return code
    except interrupts.Interrupted as e:
        print(f"alas: {e.summary or f'{e}; nothing was written'}{note}", file=sys.stderr)
        return own_exit or e.exit_code
    except AlasError as e:
        print(f"alas: error: {e}", file=sys.stderr)
        return e.exit_code
    except ImportError as e:
        # The embedded default installs without the cluster extra; commands that need it say so in one line.
        missing = getattr(e, "name", None) or ""
        if missing.split(".")[0] in _CLUSTER_MODULES or "[cluster]" in str(e):
            print(f"alas: error: this command needs the cluster extra: pip install 'alas-argo[cluster]' ({e})",
                  file=sys.stderr)
            return 2
        raise
    except KeyboardInterrupt:
        print("alas: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
