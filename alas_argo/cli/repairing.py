"""`alas disrupt`, `alas repair`, `alas gantt` and `alas bench repair`: thin wrappers over the library."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from alas_argo.benchmarks.partial_table import PartialTable
from alas_argo.benchmarks.repair import COLUMNS, RepairRow, check_bench_arguments, rerun_command, run_repair_bench
from alas_argo.benchmarks.repair_report import (
    from_csv,
    lcrp_ratios,
    merge_tables,
    size_ratios,
    summarize,
    write_outputs,
)
from alas_argo.bounds import MAX_WORKERS
from alas_argo.cli.app import Commands, add_instance_argument, print_json, run_with_progress, write_json_file
from alas_argo.cli.flag_values import MAX_SEEDS, finite_float, seconds, whole
from alas_argo.cli.flag_values import seed as seed_flag
from alas_argo.cli.outputs import check_output_dir, check_output_file
from alas_argo.cli.validating import load_disruption_file, load_plan_of, load_schedule_file
from alas_argo.errors import InputError
from alas_argo.file_names import found, read_limited
from alas_argo.jssp.catalog import get_instance, load_instance, suite
from alas_argo.jssp.disruption import Disruption, DisruptionKind, generate_disruption
from alas_argo.jssp.disruption_families import FAMILIES, generate_family
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.gantt import save_gantt
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, MAX_STREAMS, FirstEdit, RepairMethod, repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.seeds import MAX_SEED

__all__ = ["register"]

#: File types `alas gantt --out` writes.
GANTT_SUFFIXES = (".png", ".html")


def _disrupt(args: argparse.Namespace) -> int:
    check_output_file(args.out)
    if args.kind is not None and args.family is not None:
        raise InputError("give one of --kind and --family, not both: a family draws the kind too")
    instance = load_instance(args.instance)
    schedule = load_plan_of(args.schedule, instance)
    what = args.family or args.kind or DisruptionKind.BREAKDOWN.value  # neither given: a breakdown
    if args.family is not None:
        # A family draws every parameter from its seed: the flags that set them would not be honoured.
        d = generate_family(instance, schedule, args.family, seed=args.seed)
    else:
        machine: int | str | None = args.machine
        if isinstance(machine, str):
            machine = "random" if machine == "random" else _int(machine, "--machine")
        d = generate_disruption(instance, schedule, what, seed=args.seed,
                                machine=machine,  # type: ignore[arg-type]
                                at=args.at, length=args.length, increase=args.increase, share=args.share,
                                machines=args.machines, increase_max=args.increase_max)
    check_disruption(instance, schedule, d)
    write_json_file(args.out, d.to_json())
    if args.json:
        print_json(d.to_json())
    else:
        parts = [f"machine {b.machine} down [{b.start}, {b.end})" for b in d.breakdowns]
        if d.duration_changes:
            n = len(d.duration_changes)
            parts.append(f"{n} operation{'s take' if n > 1 else ' takes'} longer")
        print(f"{what} revealed at {d.time}: {'; '.join(parts) or 'no events'} -> {args.out}")
    return 0


def _int(text: str, flag: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{flag} must be a machine number or 'random', got {text!r}") from None


def _inputs(args: argparse.Namespace) -> tuple[Instance, Schedule, Disruption]:
    """The three files of a repair, each checked with the rules `alas validate` uses, errors naming the file."""
    instance = load_instance(args.instance)
    schedule = load_schedule_file(args.schedule, instance)
    disruption = load_disruption_file(args.disruption, instance)
    check_disruption(instance, schedule, disruption, source=args.disruption)
    return instance, schedule, disruption


def _repair(args: argparse.Namespace) -> int:
    check_output_file(args.out)
    instance, schedule, disruption = _inputs(args)
    result = repair(instance, schedule, disruption, args.method, budget=args.time_limit, seed=args.seed,
                    workers=args.workers, effort=args.effort, tolerance=args.tolerance,
                    deterministic=not args.wall_clock, streams=args.streams, first_edit=args.first_edit)
    write_json_file(args.out, result.to_json())
    if args.json:
        print_json(result.metrics())
        return 0
    r = result
    print(f"{r.method} on {instance.name}: makespan {r.baseline_makespan} -> {r.makespan} "
          f"({r.makespan - r.baseline_makespan:+d}), valid")
    print(f"  moved {r.moved_operations} operations, total shift {r.total_start_shift}, "
          f"work in progress reordered {r.wip_moved}")
    print(f"  edit radius {r.edit_radius} operations on {len(r.edit_machines)} machines, "
          f"{r.neighbourhood_growths} growths, fallback {'yes' if r.fallback else 'no'}, {r.seconds:.3f} s")
    print(f"  touched {r.moved_operations} operations on {len(r.touched_machines)} machines "
          f"({len(r.resequenced_machines)} re-sequenced); "
          + (f"global: {r.global_reason}" if r.global_reason else "stayed local"))
    # What the tabu first edit did, or why it did not run (the compiled search not built): asked for, so said.
    for note in r.notes:
        if note.startswith("tabu first edit"):
            print(f"  {note}")
    print(f"  -> {args.out}")
    return 0


def _gantt(args: argparse.Namespace) -> int:
    check_output_file(args.out, suffixes=GANTT_SUFFIXES)
    instance = load_instance(args.instance)
    schedule = load_schedule_file(args.schedule, instance)
    before = load_schedule_file(args.before, instance, "baseline") if args.before else None
    disruption = load_disruption_file(args.disruption, instance) if args.disruption else None
    for plan in (schedule, before):
        # Drawn all the same (a chart of a wrong plan is how one looks at it), with the validator's word for it.
        if plan is not None and plan.instance != instance.name:
            print(f"warning: instance_mismatch: schedule is for instance {plan.instance!r}, drawn as "
                  f"{instance.name!r}", file=sys.stderr)
    path = save_gantt(args.out, instance, schedule, before=before, disruption=disruption, title=args.title)
    print(f"gantt -> {path}")
    return 0


def _effort(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"--lcrp-effort takes numbers such as 1 or 1,4, got {text!r}") from None


def _bench_repair(args: argparse.Namespace) -> int:
    if args.from_csv:
        directory = check_output_dir(args.out)
        # Several files merge: the rows of one method measured once can be set against another run's.
        sources = [Path(p.strip()) for p in args.from_csv.split(",") if p.strip()]
        if not sources:
            raise InputError("--from-csv: no file given (comma-separated repair.csv paths)")
        tables = []
        for source in sources:
            if not found(source, file=True):  # a name too long to look up is no file either
                raise InputError(f"--from-csv: no file {str(source)[:200]}")
            try:  # utf-8-sig: a byte order mark is not part of the header
                text = read_limited(source).decode("utf-8-sig")
            except UnicodeDecodeError as e:
                raise InputError(f"--from-csv: not UTF-8 text (byte {e.start})", where=str(source)) from None
            except OSError as e:
                raise InputError(f"--from-csv: cannot read: {e.strerror or e}", where=str(source)) from None
            tables.append((str(source), from_csv(text, source=str(source))))
        rows, notes = merge_tables(tables)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        return _report(rows, directory, "Repair benchmark (re-rendered from "
                       f"{', '.join(s.name for s in sources)})", args.json)
    if args.first_seed + args.seeds - 1 > MAX_SEED:
        raise InputError(f"--first-seed {args.first_seed} with --seeds {args.seeds} runs past the last seed, "
                         f"{MAX_SEED}")
    names = suite(args.suite)
    for n in names:
        get_instance(n)
    efforts = [_effort(e) for e in args.lcrp_effort.split(",") if e.strip()]
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    # Every argument is checked before the output directory is made and the progress line starts.
    methods = check_bench_arguments(scenarios, [m.strip() for m in args.methods.split(",") if m.strip()], efforts,
                                    args.lcrp_tolerance)
    directory = check_output_dir(args.out)
    total = len(names) * len(scenarios) * args.seeds * (len(methods) + (len(efforts) - 1) * (
        RepairMethod.LCRP in methods))
    kwargs: dict[str, Any] = {"scenarios": scenarios, "seeds": args.seeds, "methods": methods,
                              "time_limit": args.time_limit, "baseline_time_limit": args.baseline_time_limit,
                              "workers": args.workers, "cache": directory / "baselines",
                              "lcrp_efforts": efforts, "lcrp_tolerance": args.lcrp_tolerance,
                              "lcrp_first_edit": args.lcrp_first_edit,
                              "deterministic": args.deterministic,
                              "cases": directory / "cases", "first_seed": args.first_seed}
    with PartialTable(directory / "repair.csv", COLUMNS) as table:
        def run(on_row: Callable[[RepairRow], None] | None) -> list[RepairRow]:
            def keep(row: RepairRow) -> None:
                table.add(row)  # a killed benchmark keeps every finished case
                if on_row is not None:
                    on_row(row)

            return run_repair_bench(names, on_row=keep, **kwargs)

        rows = run_with_progress(run, total=total, first="baselines and repairs", quiet=args.json,
                                 what="alas bench repair",
                                 label=lambda r: f"{r.instance} {r.scenario}#{r.seed} {r.method}")
    title = (f"Repair benchmark: {args.suite}, scenarios {','.join(scenarios)}, {args.seeds} seeds from "
             f"{args.first_seed}, {args.time_limit:g} s budget{' (deterministic)' if args.deterministic else ''}, "
             f"lcrp effort {','.join(f'{e:g}' for e in efforts)}"
             + (f", makespan tolerance {args.lcrp_tolerance:g}" if args.lcrp_tolerance else "")
             + (f", first edit {args.lcrp_first_edit}" if args.lcrp_first_edit != DEFAULT_FIRST_EDIT else ""))
    rerun = rerun_command(str(directory), rows[0], time_limit=args.time_limit,
                          deterministic=args.deterministic) if rows else None
    return _report(rows, directory, title, args.json, rerun)


def _report(rows: list[RepairRow], directory: Path, title: str, as_json: bool, rerun: str | None = None) -> int:
    paths = write_outputs(rows, directory, title=title, rerun=rerun)
    ratios, by_size = lcrp_ratios(rows), size_ratios(rows)
    valid = sum(r.valid for r in rows) / max(1, len(rows))
    if as_json:
        print_json({"summary": [asdict(s) for s in summarize(rows)], "lcrp_ratios": [asdict(x) for x in ratios],
                    "by_size": [asdict(x) for x in by_size], "valid_rate": valid, "outputs": [str(p) for p in paths]})
    else:
        print(f"{len(rows)} repairs, valid {100 * valid:.1f}%")
        for s in summarize(rows):
            print(f"  {s.scenario:<9} {s.method:<11} makespan/baseline {s.mean_makespan_ratio:.4f}  "
                  f"moved {s.mean_moved:6.1f}  median {s.median_seconds:.3f} s  valid {100 * s.valid_rate:.0f}%")
        print("lcrp against (makespan ratio, moved ratio, time ratio):")
        for x in ratios:
            print(f"  {x.lcrp:<7} {x.scenario:<9} vs {x.against:<11} {x.makespan_ratio:.4f}  {x.moved_ratio:.3f}  "
                  f"{x.time_ratio:.3f}  not worse {x.not_worse}/{x.cases}")
        print("lcrp against full by instance size (makespan ratio, moved ratio, lcrp median seconds):")
        for z in by_size:
            print(f"  {z.lcrp:<7} {z.size:<7} {z.cases:3} cases  {z.makespan_ratio:.4f}  {z.moved_ratio:.3f}  "
                  f"{z.median_seconds:.3f} s")
        print("outputs: " + " ".join(str(p) for p in paths))
    return 0 if valid == 1.0 else 1


def register(commands: Commands) -> None:
    """Add `alas disrupt`, `alas repair`, `alas gantt` and `alas bench repair`."""
    p = commands.add("disrupt", _disrupt, help="Draw a seeded disruption of a plan (breakdown, shock, mixed).")
    add_instance_argument(p, help="Bundled instance name or instance file.")
    p.add_argument("--schedule", required=True, help="The plan in force (schedule JSON).")
    p.add_argument("--kind", default=None, choices=[k.value for k in DisruptionKind],
                   help="breakdown (a machine stops; the default), shock (operations take longer) or mixed "
                   "(both); or --family instead")
    p.add_argument("--family", default=None, choices=list(FAMILIES),
                   help="Draw every parameter from a disruption family instead (seeded; the flags below are "
                   "ignored): " + "; ".join(f"{f.name}: {f.description}" for f in FAMILIES.values()).replace("%", "%%"))
    p.add_argument("--seed", type=seed_flag, default=0, help="same seed, same disruption (default 0)")
    p.add_argument("--machine", default=None,
                   help="Machine that breaks down, or 'random' (default: the one with the most work left).")
    p.add_argument("--at", type=finite_float, default=None, help="Reveal time as a fraction of the makespan.")
    p.add_argument("--length", type=finite_float, default=None, help="Downtime as a fraction of the makespan.")
    p.add_argument("--increase", type=finite_float, default=0.3, help="Shock: fractional duration increase.")
    p.add_argument("--share", type=finite_float, default=0.2, help="Shock: share of unstarted operations hit.")
    p.add_argument("--machines", type=int, default=1,
                   help="Breakdown: machines down at once (--machine or the busiest, then the next busiest; "
                   "distinct random ones with --machine random). Default 1.")
    p.add_argument("--increase-max", type=finite_float, default=None,
                   help="Shock: draw each operation's increase from [--increase, --increase-max].")
    p.add_argument("-o", "--out", required=True, help="Where to write the disruption JSON.")
    p.add_argument("--json", action="store_true", help="Print the disruption as JSON.")

    p = commands.add("repair", _repair, stoppable=True,
                     help="Repair a plan after a disruption and report what changed.",
                     description="Repair the plan in force after a disruption with one method and write the "
                     "repaired schedule plus its metrics (R.json). Exit 2 on bad input, including a plan "
                     "that was already invalid before the disruption and a disruption no plan can honour (a "
                     "started operation grown past the start of one that started after it; an interrupted "
                     "operation whose job successor has started), each named.")
    add_instance_argument(p, help="Bundled instance name or instance file.")
    p.add_argument("--schedule", required=True, help="The plan in force (schedule JSON).")
    p.add_argument("--disruption", required=True, help="Disruption JSON.")
    p.add_argument("--method", default="lcrp", choices=[m.value for m in RepairMethod],
                   help="lcrp (local cascading repair), aor / right-shift (keep the sequences), full / full-stable "
                   "(re-solve everything not started; stable also minimises moves); default lcrp")
    p.add_argument("--time-limit", type=seconds, default=10.0,
                   help="CP-SAT budget in nominal seconds (deterministic time unless --wall-clock).")
    p.add_argument("--effort", type=finite_float, default=1.0,
                   help="LCRP time-box multiplier (default 1: a median of 0.08-0.20 nominal s of search on the 20x15 "
                   "sets of bench/README.md). The box and its makespan stage grow linearly with it: larger efforts buy "
                   "a shorter plan and, above 1, a count over every free operation for fewer moves at the makespan "
                   "reached (effort 2: 0.67-0.76 of a full re-solve's moves on those sets, 0.76-0.87 at effort 1; the "
                   "effort/quality curve in bench/README.md). The budget still caps it; other methods ignore it.")
    p.add_argument("--tolerance", type=finite_float, default=0.0, metavar="T",
                   help="Let LCRP's plan end up to T (a fraction: 0.005 is 0.5 %%) later than the makespan it "
                   "reached, where that keeps more operations at their planned start (a last count solve of "
                   "0.002 s per free operation times --effort). Default 0: no makespan is traded. Measured in "
                   "bench/README.md (trading makespan for moves); other methods ignore it.")
    p.add_argument("--streams", type=whole(1, MAX_STREAMS), default=1, metavar="N",
                   help=f"Run LCRP's re-optimizing search as N independent streams side by side, one thread each, "
                   f"and keep the shortest plan (1 to {MAX_STREAMS}; default 1). Still reproducible; on the "
                   "issue-17 sets two streams gave plans about 0.1 %% shorter for about twice the CPU "
                   "(bench/README.md, search streams). Other methods ignore it.")
    p.add_argument("--first-edit", default=DEFAULT_FIRST_EDIT.value, choices=[e.value for e in FirstEdit],
                   help="How LCRP closes the gap a local edit leaves: tabu (the default) runs a compiled tabu "
                   "search of up to 30,000 iterations (two streams) over every free operation's machine order, "
                   "seeded with --seed, when the cascade's plan is still above the lower bound, and gives every "
                   "stage a time box 0.3 times the re-dispatch's; redispatch (the earlier default) starts the same way "
                   "(AOR, or the free operations re-dispatched in planned order) and leaves that gap to CP-SAT "
                   "alone, in the larger box. A repair whose local plan reaches the bound never runs the search. "
                   "Without the compiled search (no C compiler at install) tabu repairs as redispatch does and "
                   "the notes say so (bench/README.md, issue 17). Other methods ignore it.")
    p.add_argument("--seed", type=seed_flag, default=0, help="CP-SAT's random seed (default 0).")
    p.add_argument("--workers", type=whole(1, MAX_WORKERS), default=2,
                   help="CP-SAT search workers with --wall-clock (default 2).")
    p.add_argument("--wall-clock", action="store_true",
                   help="Count the budget in wall time on --workers workers instead of CP-SAT deterministic time on "
                   "one (the default, so the same inputs give the same repair).")
    p.add_argument("-o", "--out", required=True, help="Where to write R.json.")
    p.add_argument("--json", action="store_true", help="Print the metrics as JSON.")

    p = commands.add("gantt", _gantt, help="Draw a schedule as a Gantt PNG (before/after with --before).")
    add_instance_argument(p, help="Bundled instance name or instance file.")
    p.add_argument("--schedule", required=True, help="The schedule to draw (the repaired one with --before).")
    p.add_argument("--before", default=None, help="The plan before the repair: two panels, moved ops outlined.")
    p.add_argument("--disruption", default=None, help="Shade its downtime and mark its reveal time.")
    p.add_argument("--title", default=None, help="Chart title (default: the instance name).")
    p.add_argument("-o", "--out", required=True,
                   help="File to write: .png for reports, .html for the interactive chart.")

    commands.group("bench", "Benchmarks.")
    p = commands.add("repair", _bench_repair, group="bench", stoppable=True,
                     help="Every repair method on the same baselines and disruptions; tables and Pareto plots.",
                     description="For each instance of SUITE, plan a baseline (cached in OUT/baselines), draw "
                     "SEEDS disruptions per scenario, repair each with every method, validate every result, "
                     "and write repair.csv, repair.md and pareto-<scenario>.png into OUT.")
    p.add_argument("--suite", default="smoke", help="alas45, smoke, a family, or a comma-separated list.")
    p.add_argument("--scenarios", default="breakdown,shock,mixed",
                   help="Comma-separated disruption kinds or families (default breakdown,shock,mixed; families: "
                   f"{', '.join(FAMILIES)}, see alas disrupt --help).")
    p.add_argument("--seeds", type=whole(1, MAX_SEEDS), default=3, metavar="N",
                   help="A count: N disruptions per instance and scenario, drawn with seeds 0..N-1 (default 3).")
    p.add_argument("--first-seed", type=seed_flag, default=0, metavar="S",
                   help="Start the seeds at S (seeds S..S+N-1): with --suite NAME --scenarios X --seeds 1 it "
                   "reruns one case. Every case's disruption is also kept in OUT/cases (see repair.md).")
    p.add_argument("--methods", default=",".join(m.value for m in RepairMethod),
                   help="Comma-separated repair methods (default: all of them).")
    p.add_argument("--time-limit", type=seconds, default=10.0, help="Repair budget per method and case (s).")
    p.add_argument("--baseline-time-limit", type=seconds, default=10.0, help="Planning budget per baseline (s).")
    p.add_argument("--lcrp-effort", default="1",
                   help="LCRP's time-box multiplier (see alas repair); a comma list such as 1,4 runs LCRP once per "
                   "effort, rows named lcrp and lcrp@4, against the same baselines.")
    p.add_argument("--lcrp-tolerance", type=finite_float, default=0.0, metavar="T",
                   help="LCRP's makespan tolerance (see alas repair --tolerance) for every LCRP row; rows named "
                   "lcrp+tolT and lcrp@4+tolT (default 0).")
    p.add_argument("--lcrp-first-edit", default=DEFAULT_FIRST_EDIT.value, choices=[e.value for e in FirstEdit],
                   help="LCRP's first edit (see alas repair --first-edit) for every LCRP row (default tabu); rows "
                   "are named by it: lcrp+tabu, lcrp@0.5+tabu; lcrp, lcrp@2 for redispatch (the names rows had "
                   "before tabu became the default, so older CSVs keep their meaning).")
    p.add_argument("--workers", type=whole(1, MAX_WORKERS), default=2, help="CP-SAT search workers (default 2).")
    p.add_argument("-o", "--out", default="bench/results/repair", help="Output directory.")
    p.add_argument("--deterministic", action="store_true",
                   help="repair under CP-SAT deterministic limits on one worker, as alas run and alas repair do by "
                   "default (default here: wall time on --workers workers; baselines are wall-clock plans either way)")
    p.add_argument("--from-csv", default=None, metavar="FILE",
                   help="Repair nothing: render the tables and plots of an earlier run's repair.csv into --out "
                   "(a comma-separated list merges runs on the same baselines, e.g. full once, lcrp variants "
                   "later; a case a later file measured again replaces the earlier row, with a note).")
    p.add_argument("--json", action="store_true", help="Print the summaries and ratios as JSON.")
