"""Machine sequences pinned exactly: start times, tails, the critical path, neighbours, the refusals of
a schedule that is not a complete feasible schedule of the instance, and resequencing's tie-breaks.

tests/jssp/test_lns.py checks these only through invariants (valid, never later, critical operations satisfy
their own defining equation), which the evaluation could break without failing; here every number of a small
case is worked out by hand.
"""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.sequencing import Sequences


@pytest.mark.parametrize("step", [-1, -3, 3])
def test_an_incumbent_naming_an_unknown_operation_is_refused(tiny: Instance, step: int) -> None:
    # As many operations as the instance has, but (0, 2) replaced by a step job 0 does not have. Before the
    # fix a negative step was read as counted from the end (op id -1 is the last operation) and the sequences
    # silently lost an operation, so the plan LNS returned could overlap on a machine; a step past the end
    # was an IndexError.
    schedule = dispatch(tiny, "spt")
    wrong = Schedule.from_operations("tiny", [o if o.key != (0, 2) else o.model_copy(update={"step": step})
                                              for o in schedule.operations])
    with pytest.raises(InputError, match=rf"^tiny: incumbent schedule has operation \(0, {step}\), which the "
                                         r"instance does not have$") as raised:
        Sequences.from_schedule(tiny, wrong, durations={})
    assert raised.value.where == "tiny"
