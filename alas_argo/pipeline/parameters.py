"""A run's configuration as workflow parameters and back: the data contract between ``alas run`` and the
``alas-plan`` / ``alas-repair`` / ``alas-bench`` WorkflowTemplates (:data:`alas_argo.workflows.plan.INPUTS`).

Parameters are strings (Argo's), JSON where they hold lists or documents. The first entry of ``scenarios``
(``none``, which plans only, or a disruption kind) and of ``seeds`` picks the disruption and the seed;
``alas-bench`` fans out over every entry of both (:func:`bench_cases`, which checks them all before the first
case pod starts). A ``disruption`` document (one disruption or a list) is revealed instead of a generated
one. ``disruptions`` counts the generated disruptions revealed in sequence (0: plan only), at most
:data:`~alas_argo.workflows.plan.MAX_DISRUPTIONS` (the segments ``alas-plan`` is rendered with; a larger count
is refused, never truncated); a given list reveals each of its entries, as many. An empty ``repair-budget`` is
the time limit; an empty ``repair-first-edit`` is LCRP's default first edit
(:data:`~alas_argo.jssp.repair.DEFAULT_FIRST_EDIT`).
The pods run one CP-SAT worker each, so ``workers`` is 1 on a cluster; with ``deterministic`` (the default)
the solves do not depend on it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from alas_argo import json_limits
from alas_argo.errors import InputError, first_error
from alas_argo.jssp.catalog import get_instance, suite
from alas_argo.jssp.disruption import Disruption, DisruptionKind
from alas_argo.pipeline.config import RunConfig
from alas_argo.repeats import repeated
from alas_argo.workflows.plan import MAX_DISRUPTIONS

__all__ = ["bench_cases", "check_submission", "config_from_parameters", "parameters_for"]


def _json(values: Mapping[str, str], name: str, default: Any) -> Any:
    raw = values.get(name)
    if raw in (None, ""):
        return default
    try:
        return json_limits.loads(str(raw))
    except json.JSONDecodeError as e:
        raise InputError(f"workflow parameter {name!r} is not JSON: {e.msg}", where=f"parameter {name}") from None


def _list(values: Mapping[str, str], name: str, default: list[Any]) -> list[Any]:
    items = _json(values, name, default)
    if not isinstance(items, list):
        raise InputError(f"workflow parameter {name!r} must be a JSON list", where=f"parameter {name}")
    return items


def _first(values: Mapping[str, str], name: str, default: Any) -> Any:
    items = _list(values, name, [default])
    return items[0] if items else default


#: What an entry of ``scenarios`` may be: plan only, or a generated disruption of a kind.
_SCENARIOS = ("none", *(k.value for k in DisruptionKind))


def _scenario(entry: Any) -> str:
    """An entry of ``scenarios``, one of :data:`_SCENARIOS` (a path, say, would have the pod read a file of its
    own image as a disruption; a given disruption comes in the ``disruption`` parameter)."""
    if entry not in _SCENARIOS:
        raise InputError(f"workflow parameter 'scenarios': unknown scenario {entry!r}; known: "
                         f"{', '.join(_SCENARIOS)}", where="parameter scenarios")
    return str(entry)


def _count(values: Mapping[str, str], *, given: int) -> int:
    """The parameter ``disruptions`` (default 1), checked against what ``alas-plan`` can reveal."""
    count = _whole(values.get("disruptions") or "1", "disruptions")
    for what, n in (("disruptions", count), ("the given disruption list's length", given)):
        if not 0 <= n <= MAX_DISRUPTIONS:
            # Refused, not truncated: revealing fewer disruptions than asked would be a different run.
            raise InputError(f"{what} must be between 0 and {MAX_DISRUPTIONS} (alas-plan is rendered with "
                             f"{MAX_DISRUPTIONS} disruption segments), got {n}", where="parameter disruptions")
    return count


#: RunConfig fields whose workflow parameter is not the field's name with dashes (for error messages).
_PARAMETER_OF = {"seed": "seeds", "repair_method": "method", "disrupt": "scenarios"}


def _number(values: Mapping[str, str], name: str, default: float) -> float:
    """The parameter ``name`` as a finite number (``default`` when missing or empty)."""
    raw = values.get(name)
    if raw in (None, ""):
        return default
    try:
        number = float(str(raw))
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise InputError(f"workflow parameter {name!r} must be a number, got {raw!r}", where=f"parameter {name}")
    return number


def _flag(values: Mapping[str, str], name: str, *, default: bool) -> bool:
    """The parameter ``name`` as ``true`` or ``false`` (any case; ``default`` when missing or empty). Anything
    else is refused: ``deterministic=no`` or ``0`` used to run deterministically, as every value but ``false`` did."""
    raw = values.get(name)
    if raw in (None, ""):
        return default
    word = str(raw).strip().lower()
    if word not in ("true", "false"):
        raise InputError(f"workflow parameter {name!r} must be true or false, got {raw!r}", where=f"parameter {name}")
    return word == "true"


def _whole(raw: Any, name: str) -> int:
    """``raw`` (a parameter's value, or an entry of a JSON list parameter) as a whole number."""
    try:
        if isinstance(raw, bool) or not isinstance(raw, (int, str)):
            raise ValueError(raw)  # JSON true, 1.5 or a list: not a count
        return int(raw)
    except ValueError:
        raise InputError(f"workflow parameter {name!r} must hold a whole number, got {raw!r}",
                         where=f"parameter {name}") from None


def config_from_parameters(values: Mapping[str, str], **override: Any) -> tuple[RunConfig, list[Disruption]]:
    """The run configuration and the given disruptions that workflow parameters ``values`` describe.

    Args:
        values: Workflow parameters (missing ones take the template's defaults).
        override: RunConfig fields that win over the parameters (a benchmark case's instance, ...).

    Raises:
        InputError: A parameter is malformed (names it).
    """
    scenario = _first(values, "scenarios", "breakdown")
    given = _json(values, "disruption", None)
    try:
        disruptions = [] if given is None else TypeAdapter(list[Disruption]).validate_python(
            given if isinstance(given, list) else [given])
    except ValidationError as e:
        loc, msg = first_error(e)
        raise InputError(f"{loc}: {msg}", where="parameter disruption") from None
    if not disruptions:  # with a given disruption the scenario is not read (parameters_for writes "given")
        scenario = _scenario(scenario)
    count = _count(values, given=len(disruptions))
    limit = _number(values, "time-limit", 10.0)
    fields: dict[str, Any] = {
        "instance": values.get("instance") or "ta01", "planner": values.get("planner") or "heuristic",
        "disrupt": None if scenario == "none" or disruptions or count == 0 else scenario,
        "disruptions": max(count, 1), "seed": _whole(_first(values, "seeds", 0), "seeds"),
        "time_limit": limit, "repair_method": values.get("method") or "lcrp",
        "repair_budget": _number(values, "repair-budget", limit), "faults": _whole(values.get("faults") or 0, "faults"),
        "variant": values.get("variant") or "full", "workers": 1,
        "deterministic": _flag(values, "deterministic", default=True),
        "repair_effort": _number(values, "repair-effort", 1.0),
        "repair_tolerance": _number(values, "repair-tolerance", 0.0)}
    if values.get("repair-first-edit"):  # empty: the library's default (the template cannot import it)
        fields["repair_first_edit"] = values["repair-first-edit"]
    try:
        return RunConfig(**{**fields, **override}), disruptions
    except ValidationError as e:
        loc, msg = first_error(e)
        name = _PARAMETER_OF.get(loc, loc.replace("_", "-"))
        raise InputError(f"workflow parameter {name!r}: {msg}", where=f"parameter {name}") from None


def bench_cases(values: Mapping[str, str], instances: list[str]) -> list[dict[str, Any]]:
    """The cases ``alas-bench`` fans out over: every instance x scenario x seed, its parameters checked first.

    A case pod used to be the first to read them: ``scenarios='"breakdown"'`` (a string, not a list) fanned
    out one case per letter, ``seeds='["a"]'`` ended the listing step in a ValueError traceback, and a seed
    CP-SAT cannot take or a misspelt scenario failed every case pod, each with the same error.

    Args:
        values: Workflow parameters: ``scenarios`` (a JSON list of ``none`` and disruption kinds, default
            ``["none"]``), ``seeds`` (a JSON list of seeds, default ``[0]``) and the parameters each case's run
            configuration reads (``time-limit``, ``method``, ...).
        instances: The suite's instances, in order.

    Raises:
        InputError: A parameter is malformed, empty, or names an unknown scenario (names it).
    """
    scenarios, seeds = _list(values, "scenarios", ["none"]), _list(values, "seeds", [0])
    for name, items in (("scenarios", scenarios), ("seeds", seeds)):
        if not items:  # no cases: a benchmark of nothing, which no one asks for on purpose
            raise InputError(f"workflow parameter {name!r} must list at least one entry", where=f"parameter {name}")
    scenarios = [_scenario(s) for s in scenarios]
    whole = [_whole(seed, "seeds") for seed in seeds]
    for name, parsed in (("scenarios", scenarios), ("seeds", whole)):
        twice = repeated(parsed)
        if twice:  # two case pods of one instance, scenario and seed: the same work twice, counted twice
            raise InputError(f"workflow parameter {name!r} lists {', '.join(twice)} more than once",
                             where=f"parameter {name}")
    # Each scenario and each seed in a run configuration, as the case pods will build them: a seed's validity
    # does not depend on the scenario, so one configuration per entry covers the product.
    for scenario, seed in [*((s, whole[0]) for s in scenarios), *((scenarios[0], k) for k in whole[1:])]:
        config_from_parameters(values, instance=instances[0], seed=seed,
                               disrupt=None if scenario == "none" else scenario)
    return [{"instance": n, "scenario": s, "seed": seed} for n in instances for s in scenarios for seed in whole]


def check_submission(workflow: str, values: Mapping[str, str]) -> None:
    """Check the parameters of a shipped workflow as its first step will, before it is submitted: a typo in
    ``-p`` is an error at ``alas submit``, not a failed pod minutes later. Other workflows pass unchecked.

    Args:
        workflow: The workflow's name (``alas-plan``, ``alas-repair``, ``alas-bench``, or another).
        values: Every parameter it will run with (the template's defaults and the given ones).

    Raises:
        InputError: A parameter the first step would refuse, or an unknown bundled instance or suite.
    """
    if workflow == "alas-bench":
        try:
            instances = suite(values.get("suite") or "smoke")
        except InputError as e:  # named as the parameter it came from, as the other parameters' errors are
            raise InputError(e.message, where="parameter suite") from None
        bench_cases(values, instances)
    elif workflow in ("alas-plan", "alas-repair"):
        config, _ = config_from_parameters(values)
        # A bundled name is checked here; a path is one inside the pod's image, which only the pod can read.
        if workflow == "alas-plan" and "/" not in config.instance and "." not in config.instance:
            get_instance(config.instance)


def parameters_for(config: RunConfig, *, run_id: str, disruptions: list[Disruption] | None = None) -> dict[str, str]:
    """The workflow parameters of ``alas-plan`` that run what ``config`` runs locally.

    Args:
        config: The run's configuration.
        run_id: The log run id.
        disruptions: Disruptions given as documents (revealed in order), instead of generated ones.

    Raises:
        InputError: ``config`` is not expressible as parameters: more disruptions than ``alas-plan`` has
            segments (:data:`~alas_argo.workflows.plan.MAX_DISRUPTIONS`).
    """
    count = len(disruptions) if disruptions else (0 if config.disrupt is None else config.disruptions)
    if count > MAX_DISRUPTIONS:
        raise InputError(f"alas-plan reveals at most {MAX_DISRUPTIONS} disruptions, got {count}",
                         where="disruptions")
    out = {"run-id": run_id, "instance": config.instance, "planner": config.planner,
           "scenarios": json.dumps([config.disrupt or "none"] if not disruptions else ["given"]),
           "seeds": json.dumps([config.seed]), "method": config.repair_method, "time-limit": repr(config.time_limit),
           "repair-budget": repr(config.repair_budget), "faults": str(config.faults), "variant": str(config.variant),
           "deterministic": "true" if config.deterministic else "false", "disruptions": str(count),
           "repair-effort": repr(config.repair_effort), "repair-tolerance": repr(config.repair_tolerance),
           "repair-first-edit": config.repair_first_edit.value}
    if disruptions:
        docs = [d.to_json() for d in disruptions]
        out["disruption"] = json.dumps(docs[0] if len(docs) == 1 else docs)
    return out
