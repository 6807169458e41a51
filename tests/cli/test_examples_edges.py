"""`epilog`: the exact `examples:` section a command's --help ends with, and None for a command without examples.
`tests/cli/test_help.py` only looks for one line starting with `alas` after `examples:`; these hold the
section's header, its two-space indent, every example in order and nothing else."""

from __future__ import annotations

import pytest

from alas_argo.cli import main
from alas_argo.cli.examples import EXAMPLES, epilog


def test_the_section_is_the_header_and_each_example_indented_by_two_spaces() -> None:
    assert epilog("log diff") == ("examples:\n"
                                  "  alas log diff RUN 1 2\n"
                                  "  alas log diff RUN 1 3 --limit 50 --json")
    assert epilog("ir schema") == "examples:\n  alas ir schema > workflow.schema.json"


def test_a_command_without_examples_has_no_section() -> None:
    assert "no such command" not in EXAMPLES and epilog("no such command") is None


@pytest.mark.parametrize("path", ["", "solve", "bench ablation"], ids=lambda p: p or "alas")
def test_help_ends_with_every_example_of_the_command_in_order(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*path.split(), "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert text.rstrip("\n").endswith("\n" + epilog(path)), text  # type: ignore[operator]
    listed = text.rsplit("examples:\n", 1)[1].splitlines()
    assert listed == [f"  {line}" for line in EXAMPLES[path]]
