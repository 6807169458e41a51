"""Every command's --help: a description, help text for every option, and examples that parse; an unknown option
is reported with the usage of the command it was given to."""

from __future__ import annotations

import argparse
import importlib
import json
import re
import shlex
import subprocess
import sys

import pytest

from alas_argo.cli import COMMAND_MODULES, COMMAND_WORDS, build_parser, main
from alas_argo.cli.examples import EXAMPLES


def _commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    out: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        out.append((path, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(build_parser(), ())
    return out


COMMANDS = _commands()
LEAVES = [(path, parser) for path, parser in COMMANDS
          if not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)]


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"", "run", "solve", "bench repair", "log ls", "ir validate", "ir export", "controller"} <= names
    assert len(LEAVES) >= 30


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS], ids=lambda p: " ".join(p) or "alas")
def test_help_has_examples_and_every_option_is_explained(path: tuple[str, ...],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    examples = text.split("examples:", 1)[1] if "examples:" in text else ""
    assert re.search(r"^\s+(\w+=\S+ )*alas ", examples, re.MULTILINE), f"no examples in alas {' '.join(path)} --help"
    parser = dict(COMMANDS)[path]
    silent = [a.option_strings or [a.dest] for a in parser._actions
              if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction) and not a.help]
    assert not silent, f"alas {' '.join(path)}: options without help: {silent}"


def _example_argvs() -> list[tuple[str, list[str]]]:
    out = []
    for path, lines in EXAMPLES.items():
        for line in lines:
            command = re.split(r"\s(?:#|>|&&)\s", line)[0]
            words = [w for w in shlex.split(command) if not re.match(r"^[A-Z_]+=", w)]
            if "COMMAND" in words:
                continue  # the pattern line of the top-level help
            assert words[0] == "alas", line
            out.append((f"{path or 'alas'}: {line}", [w.replace("RUN", "run-1") for w in words[1:]]))
    return out


@pytest.mark.parametrize(("label", "argv"), _example_argvs(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_example_parses(label: str, argv: list[str]) -> None:
    args, extras = build_parser().parse_known_args(argv)
    assert not extras and getattr(args, "handler", None) is not None, label


@pytest.mark.parametrize("path", [path for path, _ in LEAVES], ids=lambda p: " ".join(p))
def test_an_unknown_option_prints_the_commands_usage(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*path, "--no-such-option"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: alas {' '.join(path)} "), err
    assert "--no-such-option" in err or "required" in err


def _registered_words(module: str) -> list[str]:
    """The top-level command words ``alas_argo.cli.<module>`` registers (a command, or a group it adds to)."""
    words: list[str] = []

    class Recorder:
        def add(self, name: str, _handler: object, *, group: str | None = None, **_: object) -> argparse.ArgumentParser:
            words.append(group or name)
            return argparse.ArgumentParser()

        def group(self, name: str, help: str | None = None) -> None:
            words.append(name)

    importlib.import_module(f"alas_argo.cli.{module}").register(Recorder())
    return list(dict.fromkeys(words))


def test_the_command_word_table_is_what_the_modules_register() -> None:
    derived: dict[str, list[str]] = {}
    for module in COMMAND_MODULES:
        for word in _registered_words(module):
            derived.setdefault(word, []).append(module)
    assert {w: tuple(m) for w, m in derived.items()} == COMMAND_WORDS


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS if p], ids=" ".join)
def test_a_command_lines_own_parser_is_the_full_parsers_command(path: tuple[str, ...]) -> None:
    """`alas CMD ...` builds only CMD's modules: every command and group reads and helps exactly as in the full
    parser (the top level is built whole for `alas --help` and for an unknown word)."""
    full = dict(COMMANDS)[path]
    own = build_parser(list(path))
    for word in path:
        own = next(a for a in own._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    assert own.format_help() == full.format_help()
    assert [a.option_strings or a.dest for a in own._actions] == [a.option_strings or a.dest for a in full._actions]


def test_a_command_line_imports_only_its_commands_modules() -> None:
    code = ("import sys; from alas_argo.cli import build_parser; build_parser(['validate']); "
            "print(sorted(m for m in sys.modules if m.startswith('alas_argo.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(json.loads(out.stdout.replace("'", '"')))
    assert "alas_argo.cli.validating" in loaded
    assert not {"alas_argo.cli.running", "alas_argo.cli.llm_commands", "alas_argo.cli.logs"} & loaded


def test_building_the_parser_imports_no_solver_or_plotting_library() -> None:
    """`alas --help` (and every command that neither solves nor draws) starts without OR-Tools, pandas or
    matplotlib: they are imported when first used (alas_argo.deferred), most of the start-up time before."""
    code = ("import sys; from alas_argo.cli import build_parser; build_parser(); "
            "print([m for m in ('ortools', 'pandas', 'matplotlib') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS if p], ids=" ".join)
def test_every_command_is_listed_with_a_sentence(path: tuple[str, ...]) -> None:
    """The one-line help beside each command in its group's listing reads the same way everywhere: a sentence,
    not a lower-case fragment or the placeholder a group gets when no module gave it a help text."""
    listing = next(a for p, parser in COMMANDS if p == path[:-1] for a in parser._actions
                   if isinstance(a, argparse._SubParsersAction))
    text = next(c.help for c in listing._choices_actions if c.dest == path[-1]) or ""
    assert text[:1].isupper() and text.endswith("."), text


def test_every_out_flag_has_its_short_form() -> None:
    outs = [(" ".join(path), a.option_strings) for path, parser in LEAVES for a in parser._actions
            if "--out" in a.option_strings]
    assert len(outs) >= 10
    assert [(cmd, flags) for cmd, flags in outs if "-o" not in flags] == []


@pytest.mark.parametrize(("command", "runs"), [("log", "bench-append-*"), ("open", "bench-open-*")])
def test_the_store_benches_say_they_leave_runs_in_the_store(command: str, runs: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # They measure the store given (the user's own .alas by default), and nothing deletes from the log.
    with pytest.raises(SystemExit):
        main(["bench", command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"It writes its runs ({runs}" in text and "they stay there" in text
