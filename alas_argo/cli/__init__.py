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
import signal
import sys
from collections.abc import Callable, Sequence

from alas_argo import __version__, interrupts
from alas_argo.cli.app import Commands
from alas_argo.cli.examples import epilog
from alas_argo.errors import AlasError
from alas_argo.scrubbing import ScrubbingStream

__all__ = ["build_parser", "main"]

#: Command modules, in the order their commands appear in `alas --help`.
COMMAND_MODULES = (
    "instances", "solving", "validating", "repairing", "running", "ir_commands", "logs", "engines_commands",
    "stepping", "serving", "smoke_command", "llm_commands", "benching", "ablation_commands",
)


#: Top-level modules of the `cluster` extra (see pyproject.toml).
_CLUSTER_MODULES = {"hera", "boto3", "botocore", "kubernetes"}


def build_parser() -> argparse.ArgumentParser:
    """The full `alas` argument parser."""
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
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"alas_argo.cli.{name}")
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `alas` console script; returns the exit code."""
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # argparse would blame the top level; the command that got them prints its own usage
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    # Whatever a command prints passes through a scrubber: a configured secret echoed back by a third party
    # (an LLM endpoint's 401 body, say) never reaches the terminal or a CI log.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbingStream(sys.stdout), ScrubbingStream(sys.stderr)
    try:
        return _run(handler, args)
    finally:
        sys.stdout, sys.stderr = streams


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
