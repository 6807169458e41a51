"""`alas bench llm` (the experiment): build the transports, run, print and write the tables.

Where answers come from: the configured endpoint (``--planner llm``), the simulator (``--planner simulated``,
seeded per case), or the exchanges a previous run recorded with ``--record DIR`` (``--replay DIR``: no
endpoint, the same tables).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alas_argo.agents.context_scope import ContextScope
from alas_argo.agents.llm_client import ChatTransport
from alas_argo.agents.llm_recording import Exchange, ExchangeRecorder, ReplayTransport, exchanges_from_file
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.benchmarks.llm_bench import LlmCaseRow, LlmVariant, Prices, run_llm_bench
from alas_argo.benchmarks.llm_tables import llm_markdown, summarize_llm, write_llm_bench
from alas_argo.cli.app import print_json, run_with_progress
from alas_argo.cli.flag_values import members
from alas_argo.cli.outputs import check_output_dir
from alas_argo.errors import InputError
from alas_argo.file_names import found, read_limited
from alas_argo.json_limits import load_json
from alas_argo.jssp.catalog import get_instance, suite
from alas_argo.jssp.instance import Instance

__all__ = ["file_recorder", "load_prices", "report_bench", "report_skipped", "run_llm_experiment"]

_DEFAULT_PRICES = Path("bench/llm_prices.json")


def _case_file(directory: Path, instance: Instance, variant: LlmVariant, seed: int) -> Path:
    return directory / f"{instance.name}__{variant}__{seed}.jsonl"


def load_prices(path: Path | None) -> Prices:
    """The price table at ``path`` (default bench/llm_prices.json when present; empty without one)."""
    path = path or (_DEFAULT_PRICES if _DEFAULT_PRICES.exists() else None)
    if path is None:
        return {}
    try:
        doc = load_json(read_limited(path), where=str(path))
    except OSError as e:
        raise InputError(f"cannot read the price table: {e.strerror or e}", where=str(path)) from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise InputError("a price table maps model names to {prompt_per_1m, completion_per_1m}", where=str(path))
    return {str(k): {n: float(x) for n, x in v.items() if isinstance(x, int | float)} for k, v in doc.items()}


def _replay(directory: Path) -> Any:
    def transport(instance: Instance, variant: LlmVariant, seed: int) -> ChatTransport:
        path = _case_file(directory, instance, variant, seed)
        if not found(path, file=True):  # a name too long to look up is not recorded either
            raise InputError("no recorded exchanges for this case", where=str(path))
        return ReplayTransport(exchanges_from_file(path))

    return transport


def file_recorder(path: Path) -> ExchangeRecorder:
    """A recorder writing one case's exchanges to ``path`` as JSON lines (the file starts empty)."""
    path.write_text("", encoding="utf-8")

    def sink(exchange: Exchange) -> None:
        with path.open("a", encoding="utf-8") as f:
            f.write(exchange.model_dump_json() + "\n")

    return ExchangeRecorder(sink=sink)


def _recorder(directory: Path) -> Any:
    check_output_dir(directory, "--record")  # a bad place is one line before the run, not a traceback
    directory.mkdir(parents=True, exist_ok=True)

    def recorder(instance: Instance, variant: LlmVariant, seed: int) -> ExchangeRecorder:
        return file_recorder(_case_file(directory, instance, variant, seed))

    return recorder


def report_skipped(args: argparse.Namespace, reason: str) -> int:
    """What `alas bench llm` prints when no endpoint is configured (exit 0: the experiment is skipped)."""
    if args.json:
        print_json({"skipped": True, "reason": reason, "rows": []})
    else:
        print(f"alas bench llm: skipped: {reason}")
    return 0


def report_bench(args: argparse.Namespace, *, source: str, rows: Sequence[Any], summary: Any, markdown: str,
                 paths: Sequence[Path] | None) -> int:
    """Print a finished experiment: its JSON document with ``--json``, else its tables and where they went."""
    if args.json:
        print_json({"skipped": False, "source": source, "simulated": any(r.simulated for r in rows),
                    "summary": summary, "rows": [r.to_json() for r in rows],
                    "files": [str(p) for p in paths] if paths else []})
        return 0
    print(markdown)
    if paths:
        print("tables: " + ", ".join(str(p) for p in paths))
    return 0


def run_llm_experiment(args: argparse.Namespace) -> int:
    """The `alas bench llm` command (see its help)."""
    from alas_argo.agents.llm import client_from_settings
    from alas_argo.cli.llm_flags import llm_settings_from_args

    settings = llm_settings_from_args(args)
    variants = members(args.variants, LlmVariant, "--variants") if args.variants else list(LlmVariant)
    model = ErrorModel(**{k: v for k, v in (("entry_error_rate", args.error_rate),
                                            ("correction_rate", args.correction_rate)) if v is not None})
    # Every flag is checked before the endpoint: a bad suite is bad input even where the run would be skipped.
    instances = [get_instance(name) for name in suite(args.suite)]
    scopes = members(args.context_scopes, ContextScope, "--context-scopes")
    # The tables' directory, checked before the cases run: a bad place must not cost the run.
    out = args.out
    if out is None and not args.json:
        out = Path("bench/results") / f"llm-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    if out is not None:
        check_output_dir(out)
    if args.replay is not None:
        transport_for = _replay(args.replay)
        source = f"replay of {args.replay}"
    elif args.planner == "simulated":
        def transport_for(instance: Instance, variant: LlmVariant, seed: int) -> ChatTransport:
            return SimulatedTransport(model, seed=seed)
        source = model.describe()
    elif not settings.llm.base_url:
        return report_skipped(args, "no LLM endpoint configured (pass --llm-base-url or set OPENAI_BASE_URL, use "
                                    "--replay DIR, or --planner simulated): the LLM experiment is skipped")
    else:
        client = client_from_settings(settings.llm)

        def transport_for(instance: Instance, variant: LlmVariant, seed: int) -> ChatTransport:
            return client  # a fresh planner per case: contexts never carry over, the connection may
        source = f"{settings.llm.model} at {client.endpoint}, temperature {settings.llm.temperature:g}"
    agents = sum(v in (LlmVariant.ALAS, LlmVariant.NO_REPAIR, LlmVariant.NO_VALIDATOR) for v in variants)
    total = len(instances) * args.seeds * (len(variants) + agents * (len(scopes) - 1))
    recorder_for = _recorder(args.record) if args.record is not None else None
    rows: list[LlmCaseRow] = run_with_progress(
        lambda on_row: run_llm_bench(instances, variants, list(range(args.seeds)), transport_for,
                                     rounds=args.rounds, recorder_for=recorder_for, settings=settings.llm,
                                     prices=load_prices(args.prices), scopes=scopes, gate=args.message_gate,
                                     on_row=on_row),
        total=total, what="alas bench llm", first="llm", label=lambda r: f"{r.instance} {r.variant} {r.seed}",
        quiet=args.json)
    caption = (f"alas bench llm on {args.suite}, {args.seeds} seed(s), K={args.rounds}"
               + (", message gate on" if args.message_gate else "") + f": {source}")
    paths = write_llm_bench(out, rows, caption) if out is not None else None
    return report_bench(args, source=source, rows=rows, summary=summarize_llm(rows),
                        markdown=llm_markdown(rows, caption), paths=paths)


