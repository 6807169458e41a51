"""What the controller accepts and answers: the disruption request and the repair response.

Every field of a request is validated (types, ranges, closed sets, no unknown fields) before anything
touches the log; the first problem becomes a 422 answer naming the field.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, ValidationError

from alas_argo.errors import InputError, first_error
from alas_argo.json_limits import load_json
from alas_argo.jssp.disruption import Disruption, DisruptionEvent
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit

__all__ = ["DisruptionRequest", "RepairResponse", "parse_request"]

#: Longest Idempotency-Key accepted (keys are hashed into store keys, so length is only a sanity bound).
MAX_KEY_CHARS = 200


class DisruptionRequest(BaseModel):
    """Body of ``POST /runs/<run_id>/disruptions``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    time: StrictInt = Field(ge=0, le=10**9, description="Reveal time; operations started before it are history.")
    events: list[DisruptionEvent] = Field(min_length=1, max_length=1000, description="What happened.")
    method: Literal["lcrp", "aor", "right-shift", "full", "full-stable"] = Field(
        "lcrp", description="Repair method.")
    # Strict: a JSON number only (an integer is one); ``true`` is not a budget of 1 s, nor "0.05" a tolerance.
    budget: StrictFloat = Field(5.0, gt=0, le=120, description="Seconds of CP-SAT time the repair may use.")
    effort: StrictFloat = Field(1.0, gt=0, le=100, description="LCRP's time-box multiplier (4: a slightly shorter "
                                "plan for about 3.5 times the seconds; with a tolerance, fewer moved operations); "
                                "other methods ignore it.")
    tolerance: StrictFloat = Field(0.0, ge=0, le=0.1, description="Makespan share LCRP may give up for fewer "
                                   "moved operations (0.005: up to 0.5 % later); other methods ignore it.")
    first_edit: FirstEdit = Field(DEFAULT_FIRST_EDIT, description="LCRP's first edit: tabu (the default, a "
                                  "compiled tabu search; without it built, as redispatch) or redispatch (CP-SAT "
                                  "alone); other methods ignore it.")

    def disruption(self) -> Disruption:
        """The events as the domain's Disruption."""
        return Disruption(time=self.time, events=list(self.events))

    def fingerprint(self) -> str:
        """A hash of the request, to refuse an Idempotency-Key reused for a different request."""
        doc = self.model_dump(mode="json")
        # The first edit at the default is left out too: a retry of a request that named none keeps its
        # fingerprint across a change of the library's default.
        for name, default in (("effort", 1.0), ("tolerance", 0.0), ("first_edit", DEFAULT_FIRST_EDIT.value)):
            if doc[name] == default:
                del doc[name]  # requests from before the field existed keep their fingerprint
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class RepairResponse(BaseModel):
    """Body of a successful answer (201 when this request committed, 200 when it was a replay)."""

    run_id: str
    version: int = Field(description="The committed plan version.")
    parent_version: int = Field(description="The version the repair started from.")
    makespan: int
    baseline_makespan: int
    moved_operations: int
    total_start_shift: int
    edit_radius: int
    method: str
    fallback: bool
    seconds: float
    idempotent_replay: bool = False

    def to_json(self) -> dict[str, Any]:
        """The JSON body."""
        return self.model_dump(mode="json")


def parse_request(raw: bytes) -> DisruptionRequest:
    """Parse and validate a request body.

    Raises:
        InputError: not JSON, or the first invalid field (``where`` is its dotted path).
    """
    doc = load_json(raw, where="body")
    try:
        return DisruptionRequest.model_validate(doc)
    except ValidationError as e:
        field, msg = first_error(e, "body")
        raise InputError(msg, where=field) from None
