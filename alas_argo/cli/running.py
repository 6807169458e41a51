"""`alas run`: the README's main command — plan, disrupt, repair, commit, with a live view of the nodes."""

from __future__ import annotations

import argparse
import secrets
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError
from rich.console import Console
from rich.live import Live
from rich.table import Table

from alas_argo.bounds import MAX_FAULTS, MAX_FEEDBACK_ROUNDS, MAX_LOCAL_DISRUPTIONS, MAX_WORKERS
from alas_argo.cli.app import Commands, print_json
from alas_argo.cli.flag_values import finite_float, flag_error, seconds, whole
from alas_argo.cli.flag_values import run_id as run_id_flag
from alas_argo.cli.flag_values import seed as seed_flag
from alas_argo.cli.outputs import check_output_dir
from alas_argo.cli.progress import ProgressLines
from alas_argo.cli.run_report import moved_since_first, repair_totals, summary_table, write_outputs
from alas_argo.errors import InputError
from alas_argo.interrupts import Interrupted
from alas_argo.jssp.catalog import load_instance
from alas_argo.jssp.disruption import DisruptionKind
from alas_argo.jssp.disruption_rules import check_events
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit
from alas_argo.log import ExecutionLog, open_store
from alas_argo.pipeline import RunConfig, Variant, load_disruptions, run_pipeline
from alas_argo.pipeline.config import Optimizer, Planner, RepairMethodName
from alas_argo.pipeline.running import disruption_file
from alas_argo.runtime import StateChange
from alas_argo.settings import StoreKind, load_settings

__all__ = ["add_store_arguments", "check_disrupt_flags", "interrupted_line", "open_log", "register", "write_outputs"]

_STYLE = {"pending": "dim", "ready": "cyan", "running": "yellow", "failed_retryable": "magenta",
          "executed": "green", "failed": "red", "skipped": "dim", "cancelled": "red"}


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """`--store fs|s3` and `--root DIR` (S3 endpoint, bucket and credentials come from settings / env)."""
    parser.add_argument("--store", choices=[k.value for k in StoreKind], default=None,
                        help="execution log backend (default: fs, or ALAS_STORE__KIND)")
    parser.add_argument("--root", type=Path, default=None, help="directory of the fs store (default: .alas)")


def open_log(args: argparse.Namespace, run_id: str) -> ExecutionLog:
    """The execution log of ``run_id`` in the store the flags and settings name."""
    settings = load_settings(store={"kind": args.store, "root": args.root})
    return ExecutionLog(open_store(settings), run_id)


class _LiveView:
    """A table of node states, redrawn as the runtime reports changes (runtime threads call ``update``)."""

    def __init__(self, console: Console, title: str) -> None:
        self.console = console
        self.title = title
        self.states: dict[str, tuple[str, int]] = {}
        self.lock = threading.Lock()
        self.started = time.perf_counter()
        self.live: Live | None = None

    def render(self) -> Table:
        table = Table(title=f"{self.title}  ({time.perf_counter() - self.started:5.1f} s)", expand=False)
        table.add_column("node")
        table.add_column("state")
        table.add_column("attempt", justify="right")
        with self.lock:
            for node, (state, attempt) in self.states.items():
                table.add_row(node, f"[{_STYLE.get(state, '')}]{state}[/]", str(attempt or ""))
        return table

    def update(self, change: StateChange) -> None:
        with self.lock:
            self.states[change.node_id] = (str(change.new), change.attempt)
        if self.live is not None:
            self.live.update(self.render())


def check_disrupt_flags(args: argparse.Namespace, instance: Instance | None = None) -> None:
    """``--disrupt`` and ``--disruptions`` before anything runs: a disruption file is read and checked against
    the instance here (exit 2 naming the file and the event), not after minutes of planning. ``instance``: the
    one ``args.instance`` names, when the caller has read it already.

    Raises:
        InputError: ``--disruptions`` without a generated ``--disrupt`` kind, or a disruption file that breaks
            a rule of :func:`~alas_argo.jssp.disruption_rules.check_events`.
    """
    kinds = [k.value for k in DisruptionKind]
    if args.disruptions is not None and args.disrupt not in kinds:
        raise InputError("--disruptions counts generated disruptions: give it with --disrupt "
                         f"{'|'.join(kinds)}" + ("" if args.disrupt is None else
                                                       f" (the file {args.disrupt} holds its own)"))
    if args.disrupt is None or args.disrupt in kinds:
        return
    path = disruption_file(args.disrupt)
    instance = instance if instance is not None else load_instance(args.instance)
    found = load_disruptions(path)
    for k, disruption in enumerate(found):
        check_events(instance, disruption, source=str(path), index=k if len(found) > 1 else None)


def interrupted_line(log: ExecutionLog, stop: Interrupted) -> str:
    """One line on a run a signal stopped, from its log: where it stopped, what it kept, how to resume."""
    versions = log.versions()
    kept = f"{len(versions)} plan version{'s' if len(versions) != 1 else ''} committed" + (
        f" (current v{versions[-1]})" if versions else "")
    where = f" during {stop.where}" if stop.where else ""
    return (f"run {log.run_id} interrupted by {stop.signal_name}{where}; {kept}; resume it with the same "
            f"command and --run-id {log.run_id}")


def _run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    variant = Variant(args.variant)
    # An unknown name or a bad file fails here, before a run id or a progress line; read once for the flags too.
    check_disrupt_flags(args, load_instance(args.instance))
    try:
        config = RunConfig(instance=args.instance, planner=args.planner, disrupt=args.disrupt,
                           disruptions=args.disruptions or 1, seed=args.seed, time_limit=args.time_limit,
                           repair_method=args.repair_method, repair_budget=args.repair_budget, workers=args.workers,
                           repair_effort=args.repair_effort, repair_tolerance=args.repair_tolerance,
                           repair_first_edit=args.repair_first_edit,
                           variant=variant, faults=args.faults, deterministic=not args.wall_clock,
                           optimizer=args.optimizer, feedback_rounds=args.feedback_rounds)
    except ValidationError as e:
        raise flag_error(e) from None
    if args.out is not None:
        check_output_dir(args.out)  # before planning: a bad place must not cost the run
    run_id = args.run_id or f"{Path(args.instance).stem}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    log = open_log(args, run_id)
    resumed = log.exists()
    agent_spec: dict[str, Any] = {}
    usage: dict[str, Any] = {}
    if args.planner in ("llm", "simulated"):
        agent_spec = _llm_spec(args, log, usage)
    if args.manual_plan is not None:
        from alas_argo.cli.handoff_files import read_manual_plan

        agent_spec["manual_plan"] = read_manual_plan(args.manual_plan, log, resumed=resumed)
    console = Console(stderr=True)
    live_ok = console.is_terminal and not args.json and not args.quiet
    view = _LiveView(console, f"alas run {run_id}" + (" (resumed)" if resumed else ""))
    try:
        if live_ok:
            with Live(view.render(), console=console, refresh_per_second=8, transient=False) as live:
                view.live = live
                result = run_pipeline(config, log, listener=view.update, agent_spec=agent_spec)
        elif not console.is_terminal and not args.quiet:  # a CI log or a pipe: progress lines instead of a view
            with ProgressLines(f"alas run {run_id}", every=2.0, heartbeat=15.0) as lines:
                result = run_pipeline(config, log, listener=_node_lines(lines), agent_spec=agent_spec)
        else:
            result = run_pipeline(config, log, agent_spec=agent_spec)
    except Interrupted as e:
        e.summary = interrupted_line(log, e)
        raise
    summary = result.summary() | ({"llm": usage} if usage else {}) | {"resumed": resumed}
    summary |= {"repair_totals": repair_totals(result.repairs), "moved_since_first": moved_since_first(result),
                "pipeline_seconds": summary["seconds"]}
    if args.out is not None:
        summary["out"] = str(args.out)
        write_outputs(args.out, result, log, summary=summary, started=started)
    summary["seconds"] = round(time.perf_counter() - started, 3)  # everything, the Gantt chart included
    if args.json:
        print_json(summary)
    elif not args.quiet:
        Console().print(summary_table(summary))
        if result.run is None:
            print(f"note: run {run_id} had finished: its stored result (nothing ran again)", file=sys.stderr)
        for note in summary["notes"]:
            print(f"note: {note}", file=sys.stderr)
        for name, err in result.errors.items():
            print(f"  {name}: {err}", file=sys.stderr)
        if args.out is not None:
            print(f"plans, disruptions, report, gantt.png and gantt.html written to {args.out}")
    if result.handoff is not None:
        from alas_argo.cli.handoff_files import write_handoff

        # Beside the run's outputs, else under the local store's directory (never the working directory).
        where = args.out or (args.root or Path(".alas")) / "handoff" / run_id
        print(write_handoff(result.handoff, where, run_id), file=sys.stderr)
    return 0 if result.succeeded else 1


def _node_lines(lines: ProgressLines) -> Callable[[StateChange], None]:
    """A runtime listener that turns node state changes into progress lines."""
    running: dict[str, None] = {}

    def listen(change: StateChange) -> None:
        state = str(change.new)
        if state == "running":
            running[change.node_id] = None
        else:
            running.pop(change.node_id, None)
        lines.working_on(", ".join(running) or "-")
        if state in ("failed", "failed_retryable", "cancelled"):
            lines.say(f"{change.node_id} {state.replace('_', ' ')} (attempt {change.attempt})")
        elif state in ("executed", "skipped"):
            lines.done(f"{change.node_id} {state}")

    return listen


def _llm_spec(args: argparse.Namespace, log: ExecutionLog, usage: dict[str, Any]) -> dict[str, Any]:
    from alas_argo.agents.llm_recording import ExchangeRecorder, log_sink
    from alas_argo.cli.llm_flags import llm_settings_from_args

    settings = llm_settings_from_args(args)
    if args.planner == "llm" and not settings.llm.base_url and not args.llm_replay and not args.llm_fallback:
        raise InputError("--planner llm needs an endpoint: pass --llm-base-url or set OPENAI_BASE_URL (or replay a "
                         "run with --llm-replay RUN); --llm-fallback plans with the heuristic agents instead")
    replay_events = None
    if args.llm_replay:
        source = open_log(args, args.llm_replay)
        if not source.exists():
            raise InputError(f"no run {args.llm_replay!r} to replay LLM answers from")
        replay_events = source.events()

    def on_usage(u: dict[str, Any]) -> None:
        for k, v in u.items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                usage[k] = usage.get(k, 0) + v

    return {"settings": settings, "replay_events": replay_events, "on_usage": on_usage,
            "recorder": ExchangeRecorder(sink=log_sink(log))}


def register(commands: Commands) -> None:
    """Add `alas run`."""
    from alas_argo.cli.llm_commands import add_llm_arguments

    p = commands.add(
        "run", _run, stoppable=True, help="Plan an instance with agents, validate, commit; disrupt and repair locally.",
        description="Run the ALAS pipeline on one instance: job agents propose in parallel, the supervisor "
        "merges, the independent validator checks (validate -> repair -> validate under a loop guard), the "
        "optimizer improves, the plan is committed as version 1; with --disrupt a disruption is revealed, "
        "LCRP repairs the smallest affected neighbourhood, and the repaired plan is committed as a new "
        "version.\n\nexamples:\n  alas run ta01 --disrupt breakdown\n  alas run ft06 --planner heuristic "
        "--disrupt shock --out out/ft06\n  alas run la01 --disrupt mixed --disruptions 3 --json\n"
        "  alas run ta01 --run-id my-run        # resume a run with the same id\n\n"
        "Runs are reproducible: every solve and repair is limited by CP-SAT deterministic time on one worker "
        "with fixed seeds (--wall-clock opts out), so the same inputs give the same plans. A run records its "
        "inputs when it starts; an existing --run-id resumes it only with the same inputs (exit 2 naming what "
        "differs), returns the stored result of a finished run at once, and continues an interrupted one after "
        "its last finished step; while another process is running that id on the same filesystem store, it exits "
        "75 at once. Ctrl-C or SIGTERM stops the search cleanly and exits 130 or 143.\n\n"
        "exit codes: 0 valid final plan, 1 run failed or final plan invalid, 2 bad input, 75 transient, "
        "130 / 143 interrupted (SIGINT / SIGTERM)")
    p.add_argument("instance", metavar="INSTANCE", help="bundled name (ta01, ft06, dmu03) or instance file")
    p.add_argument("--disrupt", metavar="KIND|FILE", default=None,
                   help="breakdown, shock, mixed, or a disruption JSON file (one object or a list)")
    p.add_argument("--disruptions", type=whole(1, MAX_LOCAL_DISRUPTIONS), default=None, metavar="N",
                   help="how many disruptions (1-20) --disrupt KIND generates, revealed one after another "
                   "(default 1); the cluster's alas-plan reveals at most 3 (-p disruptions=N)")
    p.add_argument("--seed", type=seed_flag, default=0, help="seed of every random choice (default 0)")
    p.add_argument("--planner", choices=get_args(Planner), default="cpsat",
                   help="planner backend (default cpsat); simulated: a declared, seeded stand-in for an LLM "
                   "endpoint with a stated error model (no model is asked)")
    p.add_argument("--optimizer", choices=get_args(Optimizer), default="auto",
                   help="auto: the planner's default; none: the merged proposals are the plan (with llm or "
                   "simulated agents: the LLM in charge, with validator feedback)")
    p.add_argument("--manual-plan", type=Path, default=None, metavar="FILE",
                   help="resume a run that handed over to a person (human fallback) with this edited plan: the "
                   "node that gave up checks it first")
    p.add_argument("--feedback-rounds", type=whole(0, MAX_FEEDBACK_ROUNDS), default=5, metavar="K",
                   help="rounds of validator feedback to the job agents before the patch (default 5)")
    p.add_argument("--time-limit", type=seconds, default=10.0,
                   help="optimizer budget in nominal seconds of deterministic search (default 10)")
    p.add_argument("--repair-method", default="lcrp",
                   choices=get_args(RepairMethodName), help="repair method (default lcrp)")
    p.add_argument("--repair-budget", type=seconds, default=5.0, help="nominal seconds per repair (default 5)")
    p.add_argument("--repair-effort", type=finite_float, default=1.0, metavar="E",
                   help="LCRP's time-box multiplier (default 1, a median of 0.08-0.20 nominal s on 20x15; larger "
                   "efforts buy a slightly shorter plan and, above 1, fewer moved operations; see alas repair "
                   "--effort)")
    p.add_argument("--repair-tolerance", type=finite_float, default=0.0, metavar="T",
                   help="makespan share LCRP may give up for fewer moved operations (default 0; 0.005 with "
                   "--repair-effort 4 moved 0.620 of what a full re-solve moves at 0.9944 of its makespan on the "
                   "held-out 20x15 families; see alas repair --tolerance)")
    p.add_argument("--repair-first-edit", default=DEFAULT_FIRST_EDIT.value, choices=[e.value for e in FirstEdit],
                   help="how LCRP closes what a local edit leaves (default %(default)s): tabu, a compiled tabu search "
                   "where the local plan is above the lower bound, in a smaller time box; or redispatch, CP-SAT "
                   "alone (the earlier default); without the compiled search tabu repairs as redispatch, with a "
                   "note; see alas repair --first-edit)")
    p.add_argument("--workers", type=whole(1, MAX_WORKERS), default=2,
                   help="parallel agents, and CP-SAT workers with --wall-clock (default 2)")
    p.add_argument("--wall-clock", action="store_true",
                   help="limit solves and repairs by wall time on --workers workers instead of deterministic time "
                   "on one (faster to a good plan on an idle machine, but the same inputs no longer give the same "
                   "plans; replay then reports drift)")
    p.add_argument("--variant", choices=[v.value for v in Variant], default="full",
                   help="ablation variant (default full)")
    p.add_argument("--faults", type=whole(0, MAX_FAULTS), default=0,
                   help="structural faults injected into the merged plan")
    p.add_argument("-o", "--out", type=Path, default=None, metavar="DIR",
                   help="write plans (final.json), disruptions, report, gantt.png and gantt.html (interactive) here")
    p.add_argument("--run-id", type=run_id_flag, default=None, help="run id (an existing id resumes that run)")
    add_store_arguments(p)
    add_llm_arguments(p)
    p.add_argument("--llm-replay", metavar="RUN", default=None, help="replay recorded LLM answers of RUN")
    p.add_argument("--llm-fallback", action="store_true",
                   help="with --planner llm and no endpoint configured, plan with the heuristic agents (with a "
                   "note) instead of failing")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no live view and no summary table")
