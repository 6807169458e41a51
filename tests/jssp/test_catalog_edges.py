"""The catalog's lookups and suites at their edges: the exact refusals (message and place), the forms a name may
take, `all`, an empty or one-word suite, the alas45 suite the committed results were measured on, and a list
that names one instance twice under two spellings."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import FAMILIES, SUITES, bundled_names, get_instance, load_instance, suite

KNOWN = "alas45, smoke, ft, la, abz, orb, swv, yn, ta, dmu, all"


def _refusal(call: object, *args: str) -> InputError:
    assert callable(call)
    with pytest.raises(InputError) as refused:
        call(*args)
    return refused.value


def test_a_name_is_resolved_on_a_cold_cache_in_any_case_and_with_surrounding_space() -> None:
    # get_instance and the family files are cached per process: clear them so the lookup itself runs here.
    get_instance.cache_clear()
    assert get_instance(" Ta1\n").name == "ta01"
    assert get_instance("LA7").name == "la07"
    assert get_instance("yn01").name == "yn1"  # the yn family is not zero-padded: both forms work
    assert get_instance("ta001").name == "ta01"


def test_an_unknown_name_is_refused_as_given() -> None:
    err = _refusal(get_instance, "TA99")
    assert err.message == ("unknown instance 'TA99': not a file and not a bundled instance "
                           "(`alas instance list` shows them)")
    assert "unknown instance 'nope3'" in _refusal(get_instance, "nope3").message  # a family that does not exist


def test_absurd_names_are_input_errors_not_crashes() -> None:
    # 5000 digits: int() refuses more than 4300 (ValueError); a name longer than a file name can be made
    # `Path.is_file()` raise OSError (ENAMETOOLONG). Both were tracebacks from `alas instance show`.
    assert _refusal(get_instance, "ta" + "1" * 5000).message.startswith("unknown instance 'ta111")
    assert _refusal(load_instance, "x" * 300).message.startswith("unknown instance 'xxx")
    # ... and one with a suffix is a path whose `exists()` raises the same (a traceback until the review): no
    # such file, named by its first 200 characters.
    err = _refusal(load_instance, "x" * 300 + ".json")
    assert err.message == "no such file" and err.where == ("x" * 300)[:200]


def test_a_missing_file_is_named() -> None:
    err = _refusal(load_instance, "missing/ta01.txt")
    assert (err.message, err.where) == ("no such file", "missing/ta01.txt")


def test_all_is_every_bundled_instance() -> None:
    assert suite("all") == suite(" ALL ") == bundled_names()
    assert suite("Smoke") == list(SUITES["smoke"])
    assert [len(suite(f)) for f in FAMILIES] == [3, 40, 5, 10, 20, 4, 80, 80]


def test_an_empty_suite_names_the_known_ones() -> None:
    assert _refusal(suite, " , ").message == f"unknown suite ' , '; known: {KNOWN}"


def test_one_unknown_word_is_named_as_suite_or_instance_but_a_list_entry_as_an_instance() -> None:
    assert _refusal(suite, "nope").message == (f"unknown suite or instance 'nope' (suites: {KNOWN}; "
                                               "`alas instance list` shows the instances)")
    # A trailing comma makes a list: its one entry is an instance.
    assert _refusal(suite, "ta99,").message.startswith("unknown instance 'ta99': ")


def test_alas45_is_the_suite_the_committed_results_were_measured_on() -> None:
    # The README's headline figures (static planning, the repair benches) are over these 45, in this order.
    with Path("bench/results/static-alas45-60s/static.csv").open(encoding="utf-8") as f:
        measured = [row["instance"] for row in csv.DictReader(f)]
    assert suite("alas45") == measured


@pytest.mark.parametrize(("given", "named"), [("ta1,ta01", "ta01"), ("FT06,la01,ft06", "ft06"),
                                              ("yn1, YN01", "yn1")])
def test_one_instance_under_two_spellings_is_listed_twice(given: str, named: str) -> None:
    # `--suite ta1,ta01` ran ta01 twice and counted it twice in every mean: the repeat check compared spellings.
    assert _refusal(suite, given).message == f"{named} listed more than once in {given!r}"
