"""The edges of what the Gantt charts share (alas_argo.jssp.gantt_style): the palette itself (hues a golden-ratio
step apart, the hex form of each colour, the text colour chosen by the colour's luma), and ``changes`` on a
chart with no plan before and on a broken schedule (an operation of a job or step the instance does not have
is drawn, never measured against a nominal duration it lacks)."""

from __future__ import annotations

import colorsys

import pytest

from alas_argo.jssp.gantt_style import changes, job_color, job_hex, text_color
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

#: Two jobs of two operations: job 0 runs 3 then 2, job 1 runs 2 then 4.
TWO = Instance(name="two", jobs=[[(0, 3), (1, 2)], [(1, 2), (0, 4)]])

#: The palette's first jobs as the charts draw them: a change here is a change of every chart's look.
PALETTE = [("#e04343", "white"), ("#89aafa", "black"), ("#69ad09", "white"), ("#e043cd", "white"),
           ("#89fae7", "black"), ("#ad6209", "white"), ("#6a43e0", "white"), ("#8efa89", "black")]


@pytest.mark.parametrize(("job", "hex_and_text"), list(enumerate(PALETTE)))
def test_the_first_jobs_colours_and_their_text(job: int, hex_and_text: tuple[str, str]) -> None:
    assert (job_hex(job), text_color(job)) == hex_and_text


def test_each_job_is_a_golden_ratio_step_of_hue_after_the_one_before() -> None:
    for job in range(40):
        hue, _, _ = colorsys.rgb_to_hsv(*job_color(job))
        assert hue == pytest.approx((job * 0.6180339887) % 1.0, abs=1e-9)


def test_the_hex_form_is_each_channel_rounded_to_a_byte() -> None:
    for job in range(40):
        code = job_hex(job)
        assert len(code) == 7 and code.startswith("#")
        channels = [int(code[i:i + 2], 16) for i in (1, 3, 5)]
        assert channels == [round(c * 255) for c in job_color(job)]


def test_the_text_is_black_exactly_on_colours_whose_luma_is_above_0_55() -> None:
    # Rec. 601 luma: white text on the darker half of the palette, black on the lighter.
    for job in range(60):
        r, g, b = job_color(job)
        assert text_color(job) == ("black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white")
    assert {text_color(j) for j in range(60)} == {"black", "white"}


def test_with_no_plan_before_nothing_moved_and_lengthened_is_still_marked() -> None:
    plan = Schedule.from_operations("two", [Operation(job=0, step=0, machine=0, start=0, end=5),
                                            Operation(job=1, step=0, machine=1, start=0, end=2)])
    assert changes(TWO, plan, None).moved == frozenset()
    assert changes(TWO, plan, None).lengthened == {(0, 0)}


def test_operations_the_instance_does_not_have_are_never_lengthened() -> None:
    broken = Schedule.from_operations("two", [Operation(job=2, step=0, machine=0, start=0, end=50),
                                              Operation(job=1, step=2, machine=0, start=0, end=50),
                                              Operation(job=-1, step=0, machine=0, start=0, end=50),
                                              Operation(job=1, step=1, machine=0, start=6, end=11)])
    before = Schedule.from_operations("two", [Operation(job=1, step=1, machine=0, start=2, end=6)])
    seen = changes(TWO, broken, before)
    assert seen.lengthened == {(1, 1)}
    assert seen.moved == {(2, 0), (1, 2), (-1, 0), (1, 1)}  # absent from the plan before counts as moved
