"""`alas llm ping` and `alas bench llm`: check an OpenAI-compatible endpoint, compare the llm planner.

The endpoint comes from ``--llm-base-url`` / ``--llm-model``, ``ALAS_LLM__*`` or ``OPENAI_BASE_URL`` /
``OPENAI_API_KEY`` (the key is never a flag: it would land in shell history and process lists).
:func:`add_llm_arguments` and :func:`llm_settings_from_args` let other commands (``alas run``) take the
same flags.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from alas_argo.agents.llm import client_from_settings, make_llm_backend
from alas_argo.agents.llm_benchmark import BenchRow, compare_planners
from alas_argo.agents.llm_client import ExchangeKey
from alas_argo.benchmarks.llm_disruption import REPAIRS, PlanInForce
from alas_argo.bounds import MAX_FEEDBACK_ROUNDS
from alas_argo.cli.app import Commands, print_json
from alas_argo.cli.flag_values import MAX_SEEDS, seconds, share, whole
from alas_argo.cli.llm_flags import add_llm_arguments, llm_settings_from_args
from alas_argo.jssp.catalog import get_instance, suite
from alas_argo.jssp.disruption_families import FAMILIES

__all__ = ["add_llm_arguments", "llm_settings_from_args", "register"]

PING_MESSAGES = [{"role": "system", "content": "You are a health check."},
                 {"role": "user", "content": "Reply with the single word: pong"}]


def _ping(args: argparse.Namespace) -> int:
    settings = llm_settings_from_args(args)
    client = client_from_settings(settings.llm)  # InputError (exit 2) when no endpoint is configured
    result = client.complete(PING_MESSAGES, key=ExchangeKey(role="ping"))
    doc = {"endpoint": client.endpoint, "model": result.model, "answer": result.text.strip()[:200],
           "latency_s": round(result.latency_s, 3), "calls": result.calls, "prompt_tokens": result.prompt_tokens,
           "completion_tokens": result.completion_tokens, "tokens_estimated": result.estimated}
    if args.json:
        print_json(doc)
    else:
        estimated = " (estimated)" if result.estimated else ""
        print(f"{client.endpoint}: {result.model} answered {doc['answer']!r} in {doc['latency_s']} s, "
              f"{result.total_tokens} tokens{estimated}, {result.calls} call(s)")
    return 0


def _print_rows(rows: list[BenchRow]) -> None:
    table = Table(title="llm vs heuristic vs cpsat (raw = the agents' own union, before the decode)")
    for col in ("instance", "planner", "makespan", "lb", "valid", "raw valid", "raw violations", "fallbacks",
                "calls", "tokens", "seconds"):
        table.add_column(col, justify="left" if col in ("instance", "planner") else "right")
    for r in rows:
        raw = "-" if r.raw_valid is None else ("yes" if r.raw_valid else "no")
        table.add_row(r.instance, r.planner, str(r.makespan), str(r.lower_bound or "?"),
                      "yes" if r.valid else "NO", raw, str(r.violations), str(r.fallbacks), str(r.calls),
                      str(r.tokens), f"{r.seconds:.2f}")
    Console(width=max(Console().width, 130)).print(table)  # a pipe's 80 columns would cut the headers


def _bench(args: argparse.Namespace) -> int:
    if not args.compare and args.disruptions is not None:
        from alas_argo.cli.llm_disruption_command import run_llm_disruption_experiment

        return run_llm_disruption_experiment(args)
    if not args.compare:
        from alas_argo.cli.llm_bench_command import run_llm_experiment

        return run_llm_experiment(args)
    settings = llm_settings_from_args(args)
    instances = [get_instance(name) for name in suite(args.suite)]  # bad input even where the run is skipped
    if not settings.llm.base_url:
        from alas_argo.cli.llm_bench_command import report_skipped

        return report_skipped(args, "no LLM endpoint configured (pass --llm-base-url or set OPENAI_BASE_URL): "
                                    "the llm planner comparison is skipped")
    backend = make_llm_backend(settings)
    progress = None if args.json else (lambda r: print(
        f"  {r.instance:8s} {r.planner:9s} makespan {r.makespan:6d}  {r.seconds:.2f} s", file=sys.stderr))
    rows = compare_planners(instances, backend, time_limit=args.time_limit, seed=settings.solver.seed,
                            progress=progress)
    if args.json:
        print_json({"skipped": False, "model": settings.llm.model, "rows": [r.to_json() for r in rows],
                    "usage": backend.usage})
    else:
        _print_rows(rows)
        u = backend.usage
        print(f"llm usage: {u['calls']} call(s), {u['exchanges']} exchange(s), {u['total_tokens']} tokens "
              f"({u['prompt_tokens']} prompt + {u['completion_tokens']} completion), {u['latency_s']:.2f} s, "
              f"{u['failures']} failed, {u['unusable']} unusable")
    return 0


def register(commands: Commands) -> None:
    """Add `alas llm ping` and `alas bench llm`."""
    commands.group("llm", "The LLM planner backend's endpoint.")
    p = commands.add("ping", _ping, group="llm", help="Send one tiny chat request to the configured endpoint.",
                     description="Send one tiny chat request to the configured OpenAI-compatible endpoint and "
                     "report model, latency and tokens. Exit 0 when it answered, 2 on bad credentials or "
                     "configuration, 75 when it is unreachable or keeps failing.")
    add_llm_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p = commands.add("llm", _bench, group="bench", stoppable=True,
                     help="The paper's LLM experiments: variants x instances x seeds (or --planner simulated).",
                     description="Run ALAS (job agents + validator feedback + patch), its no-repair and "
                     "no-validator ablations, a single-agent LLM and a planner/critic conversation on every "
                     "instance with every seed, and report per family and overall: success rate, optimal rate, "
                     "gap, rounds, calls, tokens, wall time and cost, a paired test and prompt sizes. "
                     "--planner simulated uses the declared simulator (no model is asked; every table says so). "
                     "With --planner llm and no endpoint (and no --replay) it says so and exits 0. "
                     "--disruptions SCENARIOS runs it under disruptions instead of static planning: each variant's "
                     "static plan is made and committed (--plan-in-force), the disruption is revealed against it, "
                     "and the variant repairs: " + "; ".join(f"{v.value}: {t}" for v, t in REPAIRS.items())
                     + ". The validator judges the final plan against the disruption; the tables report success, "
                     "gap to a time-boxed full re-solve, moved operations, rounds, calls, tokens, time and cost "
                     "per scenario, family and overall, and a paired test. "
                     "--compare runs the older llm vs heuristic vs cpsat comparison instead.")
    add_llm_arguments(p)
    p.add_argument("--planner", choices=["llm", "simulated"], default="llm",
                   help="llm: the configured endpoint; simulated: the declared simulator (default llm)")
    p.add_argument("--suite", default="smoke",
                   help="suite, family or comma-separated instance names (default: smoke)")
    p.add_argument("--variants", default=None, help="comma-separated subset of alas, alas_no_repair, "
                   "alas_no_validator, single_agent, planner_critic (default all)")
    p.add_argument("--seeds", type=whole(1, MAX_SEEDS), default=3, help="threads per case: seeds 0..N-1 (default 3)")
    p.add_argument("--rounds", type=whole(0, MAX_FEEDBACK_ROUNDS), default=5,
                   help="K: feedback rounds / critic turns (default 5)")
    p.add_argument("--error-rate", type=share, default=None, help="simulator: share of entries wrong on a "
                   "first answer (default 0.36, the seed's trace)")
    p.add_argument("--correction-rate", type=share, default=None,
                   help="simulator: share of mistakes corrected per feedback round (default 0.5)")
    p.add_argument("--context-scopes", default="normal", help="comma-separated job-agent context scopes to "
                   "compare: minimal, normal, full (ALP spec §4; default normal)")
    p.add_argument("--message-gate", action="store_true", help="check every job agent's message before "
                   "delivery (reject and re-ask once, or augment with clarifications; SagaLLM §3-4)")
    p.add_argument("--prices", type=Path, default=None, help="price table JSON: model -> {prompt_per_1m, "
                   "completion_per_1m} in USD (default bench/llm_prices.json when present)")
    p.add_argument("--record", type=Path, default=None, metavar="DIR",
                   help="write every case's exchanges to DIR/<instance>__<variant>__<seed>.jsonl")
    p.add_argument("--replay", type=Path, default=None, metavar="DIR",
                   help="answer from the exchanges recorded in DIR (no endpoint is contacted)")
    p.add_argument("-o", "--out", type=Path, default=None, help="directory for llm_bench.csv and llm_bench.md "
                   "(with --disruptions: llm_disruption.csv and llm_disruption.md)")
    p.add_argument("--disruptions", default=None, metavar="SCENARIOS",
                   help="comma-separated disruption scenarios: breakdown, shock, mixed and the families of `alas "
                   f"disrupt --family` ({', '.join(FAMILIES)}); runs the experiment under disruptions "
                   "(see the description for what each variant does)")
    p.add_argument("--plan-in-force", choices=[m.value for m in PlanInForce], default="own",
                   help="--disruptions: whose static plan the disruption hits: own (each variant's; an invalid "
                   "one cannot be in force and the case fails) or shared (the alas variant's, for every variant) "
                   "(default own)")
    p.add_argument("--repair-budget", type=seconds, default=5.0, help="--disruptions: LCRP's nominal seconds "
                   "(deterministic time) for the alas variant's repair (default 5, as alas run)")
    p.add_argument("--reference-budget", type=seconds, default=10.0, help="--disruptions: deterministic "
                   "seconds of the full re-solve every gap is measured against (default 10)")
    p.add_argument("--compare", action="store_true", help="the older llm vs heuristic vs cpsat comparison")
    p.add_argument("--time-limit", type=seconds, default=2.0, help="--compare: CP-SAT seconds per instance")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
