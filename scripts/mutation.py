"""Mutation testing of one critical module with mutmut, in a scratch copy of the repository (not in CI).

Usage (from the repository root, with ``pip install mutmut==3.8.1``)::

    python scripts/mutation.py alas_argo/log/verification.py tests/log/test_verification.py \
        tests/log/test_verification_nets.py [-k EXPR] [--only GLOB]... [--sample N --seed S] [--max-children 1]

The repository's files (tracked and untracked, not ignored) are copied to ``--workdir``; there mutmut is told to
mutate only the module and to run only the given tests (``-k`` narrows them, e.g. to leave out a slow
property test), and it runs them against every mutant, or against a seeded random sample of ``N`` mutants when
the whole set would take too long on two cores. The repository itself is never touched. The score, the counts
by status and the diff of every surviving mutant are printed (and written to ``<workdir>/report.md``); the
figures and a judgement of each survivor go to ``bench/README.md``, mutation testing.

Score: (killed + timeout) / (every mutant checked), where a mutant no selected test reaches counts as a
survivor (``no tests``).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
#: mutmut's status words, as ``mutmut results --all true`` prints them.
KILLED = ("killed", "timeout")
_RESULT = re.compile(r"^\s+(\S+): (.+)$")


def _copy_repository(workdir: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    if workdir.exists():
        shutil.rmtree(workdir)
    for name in filter(None, files):
        src, dst = ROOT / name, workdir / name
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def _configure(workdir: Path, module: str, tests: list[str], keyword: str | None) -> None:
    # The whole package is copied into mutmut's tree (a lone module would not shadow the installed package);
    # only the module is mutated.
    # no:unraisableexception: mutmut's forced-fail check makes every function raise, so a test's server can leave a
    # socket open; pytest turns that warning into an error and the check fails, every mutant left "not checked".
    extra = ["-p", "no:cacheprovider", "-p", "no:unraisableexception", *(["-k", keyword] if keyword else [])]
    # mutmut runs the tests from its own tree: the files tests read relative to the repository root (README,
    # goldens, chart, dashboards) go there too.
    also = sorted(p.name for p in workdir.iterdir() if p.name not in ("alas_argo", "tests", "mutants"))
    pyproject = workdir / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.mutmut]\n"
                         'source_paths = ["alas_argo"]\n'
                         f"only_mutate = [{module!r}]\n"
                         f"also_copy = {also!r}\n"
                         f"pytest_add_cli_args_test_selection = {tests!r}\n"
                         f"pytest_add_cli_args = {extra!r}\n".replace("'", '"'))


def _mutmut(workdir: Path, *args: str) -> str:
    # The scratch copy first on the path, so subprocesses the tests start import it too (unmutated).
    env = {**os.environ, "PYTHONPATH": str(workdir)}
    done = subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=workdir, env=env, capture_output=True,
                          text=True)
    if done.returncode not in (0, 1) or "failed to collect stats" in done.stdout \
            or "Failed to run clean test" in done.stdout:
        sys.exit(f"mutation: mutmut {' '.join(args[:1])} failed (exit {done.returncode}):\n"
                 f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout


def _names(workdir: Path) -> list[str]:
    # From the generation run's records: ``mutmut print-time-estimates`` would list them too, but it drops the
    # test-to-function map that the run of the sample needs (mutmut 3.8.1).
    names: set[str] = set()
    for meta in (workdir / "mutants").rglob("*.py.meta"):
        names.update(json.loads(meta.read_text())["exit_code_by_key"])
    return sorted(names)


def _results(workdir: Path) -> dict[str, str]:
    out = _mutmut(workdir, "results", "--all", "true")
    return {m.group(1): m.group(2) for line in out.splitlines() if (m := _RESULT.match(line))}


def main(argv: list[str] | None = None) -> int:
    """Run one module's mutation test; print and write its report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the module to mutate, e.g. alas_argo/jssp/validate.py")
    parser.add_argument("tests", nargs="+", help="test files or directories to run against each mutant")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression narrowing the tests")
    parser.add_argument("--only", action="append",
                        help="test only the mutants whose name matches this glob, e.g. '*_authorized__*'; "
                             "repeat it for several functions (a mutant matching any is tested)")
    parser.add_argument("--sample", type=int, help="test a seeded random sample of this many mutants")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample")
    parser.add_argument("--max-children", type=int, default=1, help="mutants tested in parallel")
    parser.add_argument("--workdir", type=Path, help="scratch copy (default: /tmp/alas-mutation/<module>)")
    args = parser.parse_args(argv)
    module = args.module.removeprefix("./")
    if not (ROOT / module).is_file():
        parser.error(f"no module {module}")
    workdir = args.workdir or Path("/tmp/alas-mutation") / module.removesuffix(".py").replace("/", ".")
    _copy_repository(workdir)
    _configure(workdir, module, args.tests, args.keyword)
    children = f"--max-children={args.max_children}"
    chosen: list[str] = []
    if args.sample or args.only:
        # A pattern that matches no mutant: mutmut generates the mutants and maps tests to functions only.
        _mutmut(workdir, "run", children, "no-such-mutant*")
        every = _names(workdir)
        chosen = [n for n in every if any(fnmatch.fnmatchcase(n, g) for g in args.only)] if args.only else every
        if not chosen:
            sys.exit(f"mutation: no mutant matches {args.only!r}")
        if args.sample:
            chosen = sorted(random.Random(args.seed).sample(chosen, min(args.sample, len(chosen))))
        print(f"mutation: {len(chosen)} of {len(every)} mutants"
              + (f" matching {' or '.join(args.only)!r}" if args.only else "")
              + (f", sampled (seed {args.seed})" if args.sample else ""))
    _mutmut(workdir, "run", children, *chosen)
    status = _results(workdir)
    if chosen:
        status = {k: v for k, v in status.items() if k in set(chosen)}
    counts = Counter(status.values())
    total = sum(counts.values())
    killed = sum(counts[s] for s in KILLED)
    score = killed / total if total else 0.0
    survivors = sorted(k for k, v in status.items() if v not in KILLED)
    lines = [f"# {module}", "", f"tests: {' '.join(args.tests)}" + (f" -k {args.keyword!r}" if args.keyword else ""),
             f"mutants: {total}" + (f" matching {' or '.join(args.only)!r}" if args.only else "")
             + (f" (a sample, seed {args.seed})" if args.sample else ""),
             "by status: " + ", ".join(f"{s} {n}" for s, n in sorted(counts.items())),
             f"score: {killed}/{total} = {score:.1%}", "", "## Survivors", ""]
    for name in survivors:
        diff = _mutmut(workdir, "show", name)
        lines += [f"### {name} ({status[name]})", "", "```diff", diff.strip(), "```", ""]
    report = "\n".join(lines) + "\n"
    (workdir / "report.md").write_text(report)
    print(report)
    if total and not counts.keys() - {"not checked"}:
        print("mutation: no mutant was checked: the tests did not run against the mutants", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
