"""`alas bench ablation`: full ALAS vs no-repair vs no-validator under injected structural faults."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from alas_argo.benchmarks.ablation import run_ablation, summarize_ablation, write_ablation
from alas_argo.bounds import MAX_FAULTS, MAX_FEEDBACK_ROUNDS
from alas_argo.cli.app import Commands, print_json, run_with_progress
from alas_argo.cli.flag_values import MAX_SEEDS, members, seconds, whole
from alas_argo.cli.flag_values import seed as seed_flag
from alas_argo.cli.outputs import check_output_dir
from alas_argo.jssp.catalog import suite
from alas_argo.pipeline import Variant

__all__ = ["register"]


def _ablation(args: argparse.Namespace) -> int:
    names = suite(args.suite)
    variants = members(args.variants, Variant, "--variants") if args.variants else list(Variant)
    # Checked before the trials: a bad place must not cost the run.
    out = check_output_dir(Path(args.out) if args.out else Path("bench/results") / (
        f"ablation-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"))
    total = len(names) * len(variants) * args.trials
    kwargs = {"variants": variants, "trials": args.trials, "faults": args.faults, "planner": args.planner,
              "optimizer": args.optimizer, "feedback_rounds": args.feedback_rounds,
              "time_limit": args.time_limit, "seed": args.seed}
    rows = run_with_progress(lambda on_row: run_ablation(names, on_row=on_row, **kwargs), total=total,
                             what="alas bench ablation",
                             first="ablation", label=lambda r: f"{r.instance} {r.variant}", quiet=args.json)
    csv_path, md_path = write_ablation(out, rows)
    summary = summarize_ablation(rows)
    if args.json:
        print_json({"summary": summary, "csv": str(csv_path), "markdown": str(md_path)})
        return 0
    source = "faults from the SIMULATED planner (no model asked)" if args.planner == "simulated" else \
        f"planner {args.planner}"
    table = Table(title=f"Ablation on {args.suite}: {args.trials} trials, {source}, {args.faults} injected fault(s)")
    for col in ("variant", "trials", "valid final plans", "valid %", "optimal rate", "at best %",
                "mean makespan (valid)", "gap % (valid)"):
        table.add_column(col)
    for s in summary:
        table.add_row(s["variant"], str(s["trials"]), str(s["valid_final_plans"]), str(s["valid_rate_percent"]),
                      str(s["optimal_rate"]), str(s["at_best_percent"]), str(s["mean_makespan_valid"]),
                      str(s["mean_gap_percent_valid"]))
    Console().print(table)
    print(f"tables: {csv_path}, {md_path}")
    return 0


def register(commands: Commands) -> None:
    """Add `alas bench ablation`."""
    p = commands.add("ablation", _ablation, group="bench", stoppable=True,
                     help="Full vs no-repair vs no-validator with injected structural faults.",
                     description="Run the ALAS ablation: for each instance and variant, TRIALS pipeline runs whose "
                     "faults come from the planner (by default the declared LLM simulator in charge, with "
                     "--optimizer none), optionally with FAULTS more injected; report the rate of valid final "
                     "plans (checked by the independent validator), the optimal rate and the gap.")
    p.add_argument("--suite", default="smoke", help="suite, family or comma-separated names (default smoke)")
    p.add_argument("--trials", type=whole(1, MAX_SEEDS), default=20, help="trials per case (default 20)")
    p.add_argument("--faults", type=whole(0, MAX_FAULTS), default=0,
                   help="structural faults injected after the optimizer per "
                   "trial, on top of the planner's own mistakes (default 0)")
    p.add_argument("--variants", default=None, help="comma-separated subset of full,no_repair,no_validator")
    p.add_argument("--planner", choices=["simulated", "heuristic", "cpsat"], default="simulated",
                   help="planner (default simulated: the declared LLM simulator, whose mistakes are the faults)")
    p.add_argument("--optimizer", choices=["auto", "none", "heuristic", "cpsat"], default="auto",
                   help="auto: none for the simulated planner, else the planner's default")
    p.add_argument("--feedback-rounds", type=whole(0, MAX_FEEDBACK_ROUNDS), default=5,
                   help="K rounds of validator feedback (default 5)")
    p.add_argument("--time-limit", type=seconds, default=1.0, help="optimizer and repair seconds (default 1)")
    p.add_argument("--seed", type=seed_flag, default=0, help="first trial's seed (default 0)")
    p.add_argument("-o", "--out", default=None, help="directory for ablation.csv and ablation.md")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
