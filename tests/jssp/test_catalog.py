"""The bundled benchmarks: every family complete, bounds as issue #2 lists them, suites."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import FAMILIES, bundled_names, get_instance, load_instance, suite

EXPECTED_COUNTS = {"ft": 3, "la": 40, "abz": 5, "orb": 10, "swv": 20, "yn": 4, "ta": 80, "dmu": 80}


def test_family_counts() -> None:
    assert {fam: len(suite(fam)) for fam in FAMILIES} == EXPECTED_COUNTS
    assert len(bundled_names()) == sum(EXPECTED_COUNTS.values())


@pytest.mark.parametrize(
    ("name", "size", "lb", "ub"),
    [
        ("ft06", "6x6", 55, 55), ("ta01", "15x15", 1231, 1231), ("ta41", "30x20", 1926, 2005),
        ("ta71", "100x20", 5464, 5464), ("dmu19", "30x20", 3707, 3764), ("dmu03", "20x15", 2731, 2731),
        ("swv07", "20x15", 1541, 1594), ("yn4", "20x20", 967, 967), ("abz9", "20x15", 678, 678),
        ("dmu80", "50x20", None, 6686),
    ],
)
def test_sizes_and_bounds(name: str, size: str, lb: int | None, ub: int) -> None:
    inst = get_instance(name)
    assert inst.size == size
    assert (inst.lower_bound, inst.upper_bound) == (lb, ub)
    assert inst.bounds_source


def test_every_instance_is_well_formed() -> None:
    for name in bundled_names():
        inst = get_instance(name)
        for ops in inst.jobs:
            machines = [m for m, _ in ops]
            assert len(set(machines)) == len(machines), name  # each job visits a machine once
        assert inst.upper_bound is None or inst.lower_bound is None or inst.lower_bound <= inst.upper_bound


def test_alas45_suite() -> None:
    names = suite("alas45")
    assert len(names) == 45 == len(set(names))
    for n in names:
        get_instance(n)


def test_lookup_forms_and_errors() -> None:
    assert get_instance("TA1").name == "ta01"
    assert load_instance("dmu3").name == "dmu03"
    assert suite("ft06, la01") == ["ft06", "la01"]
    with pytest.raises(InputError, match="unknown instance"):
        get_instance("ta99")
    with pytest.raises(InputError, match="no such file"):
        load_instance("missing/ta01.txt")


def test_an_unknown_suite_is_named_as_a_suite_with_the_known_ones() -> None:
    # One word that is neither a suite nor an instance: `--suite nope` said "unknown instance 'nope'".
    with pytest.raises(InputError, match=r"unknown suite or instance 'nope' \(suites: alas45, smoke, .*, all; "):
        suite("nope")
    # In a list, each entry is an instance: the message names the one that is unknown.
    with pytest.raises(InputError, match="unknown instance 'ta99'"):
        suite("ft06,ta99")


def test_an_instance_listed_twice_is_refused_not_run_twice() -> None:
    # `--suite ft06,la01,ft06` ran ft06 twice, and every bench mean counted it twice.
    with pytest.raises(InputError, match=r"^ft06, la01 listed more than once in 'ft06,la01,ft06, la01'$"):
        suite("ft06,la01,ft06, la01")


def test_a_directory_named_like_an_instance_does_not_hide_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ta01").mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_instance("ta01").name == "ta01"
    with pytest.raises(InputError, match="cannot read"):
        load_instance("./ta01")  # an explicit path is read as one
    (tmp_path / "mine").write_text("2 1\n0 3\n0 4\n")
    assert load_instance("mine").num_jobs == 2  # a bare name that is a file is read
