"""`alas bench llm --disruptions` (the experiment under disruptions): build the transports, run, print, write.

Where answers come from, as for the static experiment: the configured endpoint, the simulator
(``--planner simulated``: the static plan from the case's seed as in the static experiment, the re-plan from
its own stream of draws), or a case's recorded exchanges (``--replay DIR``: one file per case holds the static
plan's and the re-plan's exchanges, served back in the order they were recorded; no endpoint).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alas_argo.agents.context_scope import ContextScope
from alas_argo.agents.llm_client import ChatTransport
from alas_argo.agents.llm_recording import ExchangeRecorder, ReplayTransport, exchanges_from_file
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.benchmarks.llm_bench import LlmVariant
from alas_argo.benchmarks.llm_disruption import LlmDisruptionRow, PlanInForce, TransportsFor, run_llm_disruption_bench
from alas_argo.benchmarks.llm_disruption_tables import disruption_markdown, summarize_disruption, write_disruption_bench
from alas_argo.cli.app import run_with_progress
from alas_argo.cli.flag_values import members
from alas_argo.cli.llm_bench_command import file_recorder, load_prices, report_bench, report_skipped
from alas_argo.cli.outputs import check_output_dir
from alas_argo.errors import InputError
from alas_argo.file_names import found
from alas_argo.jssp.catalog import get_instance, suite
from alas_argo.jssp.disruption import DisruptionKind
from alas_argo.jssp.disruption_families import FAMILIES
from alas_argo.jssp.instance import Instance

__all__ = ["parse_scenarios", "run_llm_disruption_experiment"]


def parse_scenarios(text: str) -> list[str]:
    """The comma-separated scenarios: disruption kinds and families of `alas disrupt --family`.

    Raises:
        InputError: an unknown name (the message lists the known ones).
    """
    known = [k.value for k in DisruptionKind] + list(FAMILIES)
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in known]
    if unknown or not names:
        raise InputError(f"unknown disruption scenario(s) {', '.join(unknown) or '(none given)'}; known: "
                         f"{', '.join(known)}", where="--disruptions")
    return list(dict.fromkeys(names))


def _case_file(directory: Path, instance: Instance, variant: LlmVariant, seed: int, scenario: str) -> Path:
    return directory / f"{instance.name}__{variant}__{seed}__{scenario}.jsonl"


def _replay(directory: Path) -> TransportsFor:
    def transports(instance: Instance, variant: LlmVariant, seed: int, scenario: str) -> tuple[Any, Any]:
        path = _case_file(directory, instance, variant, seed, scenario)
        if not found(path, file=True):  # a name too long to look up is not recorded either
            raise InputError("no recorded exchanges for this case", where=str(path))
        replay = ReplayTransport(exchanges_from_file(path))
        return replay, replay  # one queue per (role, job, attempt): the static answers come first, as recorded

    return transports


def _recorder(directory: Path) -> Any:
    check_output_dir(directory, "--record")  # a bad place is one line before the run, not a traceback
    directory.mkdir(parents=True, exist_ok=True)

    def recorder(instance: Instance, variant: LlmVariant, seed: int, scenario: str) -> ExchangeRecorder:
        return file_recorder(_case_file(directory, instance, variant, seed, scenario))

    return recorder


def _transports(args: argparse.Namespace, settings: Any) -> tuple[TransportsFor | None, str]:
    """The transports and a caption of where answers come from; None when no endpoint is configured."""
    from alas_argo.agents.llm import client_from_settings

    if args.replay is not None:
        return _replay(args.replay), f"replay of {args.replay}"
    if args.planner == "simulated":
        model = ErrorModel(**{k: v for k, v in (("entry_error_rate", args.error_rate),
                                                ("correction_rate", args.correction_rate)) if v is not None})

        def simulated(instance: Instance, variant: LlmVariant, seed: int, scenario: str) -> tuple[Any, Any]:
            return (SimulatedTransport(model, seed=seed),
                    SimulatedTransport(model, seed=seed, stream=f"replan:{scenario}"))

        return simulated, model.describe()
    if not settings.llm.base_url:
        return None, ""
    client = client_from_settings(settings.llm)

    def live(instance: Instance, variant: LlmVariant, seed: int, scenario: str) -> tuple[ChatTransport, ChatTransport]:
        return client, client  # a fresh planner per phase and case: contexts never carry over

    return live, f"{settings.llm.model} at {client.endpoint}, temperature {settings.llm.temperature:g}"


def run_llm_disruption_experiment(args: argparse.Namespace) -> int:
    """`alas bench llm --disruptions` (see its help)."""
    from alas_argo.cli.llm_flags import llm_settings_from_args

    scenarios = parse_scenarios(args.disruptions)
    scopes = [s.strip() for s in args.context_scopes.split(",")]
    try:
        scope = ContextScope(scopes[0])
    except ValueError:
        raise InputError("--context-scopes takes minimal, normal and full", where=args.context_scopes) from None
    if len(scopes) > 1:
        raise InputError("--disruptions runs one context scope at a time", where="--context-scopes")
    settings = llm_settings_from_args(args)
    variants = members(args.variants, LlmVariant, "--variants") if args.variants else list(LlmVariant)
    instances = [get_instance(name) for name in suite(args.suite)]  # bad input even where the run is skipped
    # The tables' directory, checked before the cases run: a bad place must not cost the run.
    out = args.out
    if out is None and not args.json:
        out = Path("bench/results") / f"llm-disruption-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    if out is not None:
        check_output_dir(out)
    transports, source = _transports(args, settings)
    if transports is None:
        return report_skipped(args, "no LLM endpoint configured (pass --llm-base-url or set OPENAI_BASE_URL, use "
                                    "--replay DIR, or --planner simulated): the LLM experiment under disruptions "
                                    "is skipped")
    recorder_for = _recorder(args.record) if args.record is not None else None
    rows: list[LlmDisruptionRow] = run_with_progress(
        lambda on_row: run_llm_disruption_bench(
            instances, variants, list(range(args.seeds)), scenarios, transports, rounds=args.rounds,
            recorder_for=recorder_for, settings=settings.llm, prices=load_prices(args.prices), scope=scope,
            gate=args.message_gate, plan_in_force=PlanInForce(args.plan_in_force),
            repair_budget=args.repair_budget, reference_budget=args.reference_budget, on_row=on_row),
        total=len(instances) * len(scenarios) * args.seeds * len(variants), what="alas bench llm --disruptions",
        first="llm under disruptions", label=lambda r: f"{r.instance} {r.scenario} {r.seed} {r.variant}",
        quiet=args.json)
    caption = (f"alas bench llm --disruptions {','.join(scenarios)} on {args.suite}, {args.seeds} seed(s), "
               f"K={args.rounds}, plan in force: {args.plan_in_force}, LCRP budget {args.repair_budget:g} s, "
               f"reference: full re-solve in {args.reference_budget:g} s (deterministic time)"
               + (", message gate on" if args.message_gate else "") + f": {source}")
    paths = write_disruption_bench(out, rows, caption) if out is not None else None
    return report_bench(args, source=source, rows=rows, summary=summarize_disruption(rows),
                        markdown=disruption_markdown(rows, caption), paths=paths)
