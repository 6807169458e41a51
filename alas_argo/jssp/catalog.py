"""The bundled benchmark instances and named suites.

Data was converted at development time (``scripts/bundle_benchmarks.py``, see NOTICE) and ships inside the
package, one JSON file per family: no network at run time.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from pathlib import Path

from alas_argo.errors import InputError
from alas_argo.file_names import found
from alas_argo.jssp.formats import read_instance_file
from alas_argo.jssp.instance import Instance
from alas_argo.repeats import repeated

__all__ = ["FAMILIES", "SUITES", "bundled_names", "get_instance", "load_instance", "suite"]

FAMILIES = ("ft", "la", "abz", "orb", "swv", "yn", "ta", "dmu")

_ALAS45 = (
    [f"dmu{i:02d}" for i in (3, 4, 8, 9, 13, 14, 18, 19, 23, 24, 28, 29, 33, 34, 38, 39)]
    + ["ta01", "ta02", "ta51", "ta52", "ta61", "ta71", "ta72"]
    + ["abz7", "abz8", "abz9"]
    + [f"swv{i:02d}" for i in range(1, 16)]
    + ["yn1", "yn2", "yn3", "yn4"]
)

#: Named suites: the ALAS paper's 45 instances, a small smoke suite, and one per family.
SUITES: dict[str, tuple[str, ...]] = {
    "alas45": tuple(_ALAS45),
    "smoke": ("ft06", "la01", "abz5"),
}


def _family(name: str) -> str:
    return re.sub(r"\d+$", "", name)


@cache
def _family_docs(family: str) -> dict[str, dict]:
    text = resources.files("alas_argo.jssp").joinpath(f"data/{family}.json").read_text(encoding="utf-8")
    return {d["name"]: d for d in json.loads(text)}


def bundled_names() -> list[str]:
    """Every bundled instance name, family by family in numeric order."""
    return [name for fam in FAMILIES for name in _family_docs(fam)]


@cache
def get_instance(name: str) -> Instance:
    """A bundled instance by name (case-insensitive; ``ta1`` and ``ta01`` both work)."""
    key = name.strip().lower()
    fam = _family(key)
    docs = _family_docs(fam) if fam in FAMILIES else {}
    if key not in docs:
        digits = key[len(fam):]
        if digits.isdigit() and len(digits) <= 9:  # int() refuses more than 4300 digits (a ValueError)
            for candidate in (f"{fam}{int(digits):02d}", f"{fam}{int(digits)}"):
                if candidate in docs:
                    key = candidate
                    break
    if key not in docs:
        raise InputError(f"unknown instance {name!r}: not a file and not a bundled instance "
                         "(`alas instance list` shows them)")
    return Instance.model_validate(docs[key])


def load_instance(name_or_path: str | Path) -> Instance:
    """A bundled instance by name, or an instance file (Taillard, OR-Library or JSON) by path."""
    path = Path(name_or_path)
    # A bare name is a file only when such a file exists: a directory called ``ta01`` in the working
    # directory must not hide the bundled instance.
    if path.suffix or found(path, file=True) or "/" in str(name_or_path):
        if not found(path):  # a name too long to look up is no file either
            raise InputError("no such file", where=str(path)[:200])
        return read_instance_file(path)
    return get_instance(str(name_or_path))


def suite(name: str) -> list[str]:
    """Instance names of a suite: a named suite, a family name, or a comma-separated list of names."""
    key = name.strip().lower()
    if key in SUITES:
        return list(SUITES[key])
    if key in FAMILIES:
        return list(_family_docs(key))
    if key == "all":
        return bundled_names()
    names = [n.strip() for n in name.split(",") if n.strip()]
    known = ", ".join([*SUITES, *FAMILIES, "all"])
    if not names:
        raise InputError(f"unknown suite {name!r}; known: {known}")
    if len(names) == 1 and "," not in name:
        # One word may have been meant as either: say both.
        try:
            get_instance(names[0])
        except InputError:
            raise InputError(f"unknown suite or instance {names[0]!r} (suites: {known}; `alas instance list` "
                             "shows the instances)") from None
    # Raises a clear error for an unknown name; the repeat check compares the instances named, not the
    # spellings (`ta1,ta01` names ta01 twice).
    twice = repeated(get_instance(n).name for n in names)
    if twice:
        # A repeated name would be run and counted twice: every mean and median of a bench weighted by a typo.
        raise InputError(f"{', '.join(twice)} listed more than once in {name!r}")
    return names
