"""The command modules' shared plumbing (alas_argo.cli.app) at the edges mutation testing found unpinned: a JSON
file that cannot be read, is not UTF-8 or is not JSON, each named in one error with its file; a JSON output
written whole, in its exact form, with nothing left beside it when the write fails; the JSON printed for
machines; and the progress of long work on each kind of stderr (progress lines for a pipe, a bar on a terminal,
nothing with ``--json`` on a terminal), each ending the work after the row in hand when a stop is requested;
which commands take over the stop signals; a group's line in the listing, its help when no command follows, and
its usage for an unknown option."""

from __future__ import annotations

import argparse
import errno
import io
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from alas_argo import interrupts
from alas_argo.cli import build_parser, main
from alas_argo.cli.app import Commands, print_json, read_json_file, run_with_progress, write_json_file
from alas_argo.errors import InputError

# --- read_json_file ----------------------------------------------------------------------------------------------


def refusal(path: Path, what: str = "schedule") -> tuple[str, object]:
    with pytest.raises(InputError) as caught:
        read_json_file(path, what)
    return caught.value.message, caught.value.where


def test_a_json_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"makespan": 55, "name": "ft06 \u2013 plan"}', encoding="utf-8")
    assert read_json_file(str(path), "schedule") == {"makespan": 55, "name": "ft06 \u2013 plan"}


def test_each_unreadable_file_is_named_with_what_it_is(tmp_path: Path) -> None:
    assert refusal(tmp_path / "missing.json") == ("schedule file not found", str(tmp_path / "missing.json"))
    # A directory: the system's reason, not Python's "[Errno 21] ..." text.
    assert refusal(tmp_path, "disruption") == (f"cannot read disruption file: {os.strerror(errno.EISDIR)}",
                                               str(tmp_path))
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"name": "Fräse"}'.encode("latin-1"))
    assert refusal(latin, "baseline") == ("baseline file is not UTF-8 text", str(latin))


def test_invalid_json_names_the_kind_of_file_and_the_place_in_it(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"makespan": 55,\n "jobs": [}\n')
    message, where = refusal(path, "schedule")
    assert message.startswith("invalid JSON in schedule file"), message
    assert message.count("invalid JSON") == 1
    assert str(where).startswith(str(path)) and "line 2" in str(where), where


# --- write_json_file ---------------------------------------------------------------------------------------------


def test_a_json_file_is_written_whole_in_its_form_and_its_directories_made(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "r.json"
    doc = {"b": [1, 2], "a": "ft06 \u2013 r\u00e9paration"}
    write_json_file(str(target), doc)
    # One-space indent, keys in the document's order, non-ASCII escaped, a final newline.
    assert target.read_bytes() == (json.dumps(doc, indent=1) + "\n").encode("ascii")
    assert target.read_text(encoding="utf-8").startswith('{\n "b": [\n  1,')
    assert sorted(p.name for p in target.parent.iterdir()) == ["r.json"]  # no temp file left


def test_a_written_file_replaces_the_earlier_one(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("earlier, longer than what comes next\n")
    write_json_file(target, [])
    assert target.read_text() == "[]\n"
    assert sorted(tmp_path.iterdir()) == [target]


def test_a_failed_write_is_one_error_naming_the_file_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    # A directory where the file goes: the rename fails after the temp file was written, as it does on a disk
    # that filled up. The error names the file with the system's reason, the directory is kept as it was, and
    # no half-written temp file is left in the user's output directory.
    target = tmp_path / "r.json"
    target.mkdir()
    (target / "kept").write_text("x\n")
    with pytest.raises(InputError) as caught:
        write_json_file(target, {"a": 1})
    assert (caught.value.message, caught.value.where) == ("cannot write: Is a directory", str(target))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    assert [p.name for p in target.iterdir()] == ["kept"]


def test_a_write_error_without_a_reason_is_named_by_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def replace(self: Path, target: object) -> Path:
        raise OSError("the device went away")

    monkeypatch.setattr(Path, "replace", replace)
    with pytest.raises(InputError) as caught:
        write_json_file(tmp_path / "r.json", {})
    assert caught.value.message == "cannot write: the device went away"


def test_a_temp_file_that_cannot_be_removed_does_not_hide_the_write_error(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # The clean-up is best effort: the user still gets the one-line error about the file, not the clean-up's.
    target = tmp_path / "r.json"
    target.mkdir()

    def unlink(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(InputError) as caught:
        write_json_file(target, {"a": 1})
    assert (caught.value.message, caught.value.where) == ("cannot write: Is a directory", str(target))


# --- print_json --------------------------------------------------------------------------------------------------


def test_print_json_prints_one_indented_document_and_strs_what_json_cannot(
        capsys: pytest.CaptureFixture[str]) -> None:
    print_json({"out": Path("runs/r1"), "rows": [1]})
    assert capsys.readouterr().out == '{\n  "out": "runs/r1",\n  "rows": [\n    1\n  ]\n}\n'


# --- run_with_progress -------------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    """Make stderr a terminal. Called in the test itself: pytest's capture sets ``sys.stderr`` again between a
    fixture and the test."""
    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    return stream


@pytest.fixture(autouse=True)
def no_stop_request() -> Iterator[None]:
    interrupts.reset()
    yield
    interrupts.reset()


def rows(items: list[str], *, stop_at: str | None = None) -> Callable[[Callable[[str], None] | None], list[str]]:
    """A piece of work over ``items`` that calls ``on_row`` after each; a stop is requested in ``stop_at``."""

    def run(on_row: Callable[[str], None] | None) -> list[str]:
        done = []
        for item in items:
            if item == stop_at:
                interrupts.request_stop(signal.SIGTERM)
            done.append(item)
            assert on_row is not None
            on_row(item)
        return done

    return run


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_a_pipe_gets_progress_lines_naming_the_command_and_the_rows(capsys: pytest.CaptureFixture[str]) -> None:
    got = run_with_progress(rows(["a", "b", "c"]), total=3, first="warming up", label=lambda r: f"case {r}",
                            quiet=True, what="alas bench x")
    assert got == ["a", "b", "c"]
    lines = [re.sub(r"^\[ *[0-9.]+ s\] ", "", line) for line in capsys.readouterr().err.splitlines()]
    # `quiet` (--json) does not silence a pipe: a CI log still shows the work moving, on stderr.
    assert lines[0] == "alas bench x: started (3 items)"
    assert lines[-2:] == ["alas bench x: 3/3 done, last: case c", "alas bench x: finished after 3/3 items"]


def test_a_terminal_gets_a_bar_with_the_first_description_then_each_rows_label(
        monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = terminal(monkeypatch)
    got = run_with_progress(rows(["a", "b", "c"]), total=3, first="warming up", label=lambda r: f"case {r}",
                            quiet=False, what="alas bench x")
    assert got == ["a", "b", "c"]
    shown = _plain(stderr.getvalue())
    assert re.search(r"warming up .* 0/3", shown), shown
    assert re.search(r"case c .* 3/3", shown), shown


def test_a_terminal_with_quiet_gets_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = terminal(monkeypatch)
    got = run_with_progress(rows(["a", "b"]), total=2, first="warming up", label=lambda r: f"case {r}",
                            quiet=True, what="alas bench x")
    assert got == ["a", "b"] and stderr.getvalue() == ""


@pytest.mark.parametrize("quiet", [True, False])
def test_a_stop_request_ends_the_work_on_a_terminal_after_the_row_in_hand(monkeypatch: pytest.MonkeyPatch,
                                                                         quiet: bool) -> None:
    stderr = terminal(monkeypatch)
    with pytest.raises(interrupts.Interrupted) as caught:
        run_with_progress(rows(["a", "b", "c"], stop_at="b"), total=3, first="warming up",
                          label=lambda r: f"case {r}", quiet=quiet, what="alas bench llm")
    assert str(caught.value) == "interrupted by SIGTERM during alas bench llm"
    if not quiet:
        shown = _plain(stderr.getvalue())
        assert "case b" in shown and "case c" not in shown, shown


def test_a_stop_request_ends_the_work_on_a_pipe_after_the_row_in_hand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(interrupts.Interrupted) as caught:
        run_with_progress(rows(["a", "b", "c"], stop_at="b"), total=3, first="warming up",
                          label=lambda r: f"case {r}", quiet=False, what="alas bench llm")
    assert str(caught.value) == "interrupted by SIGTERM during alas bench llm"
    assert capsys.readouterr().err.rstrip().endswith("alas bench llm: stopped after 2/3 items")


# --- Commands ----------------------------------------------------------------------------------------------------


def _handler(args: argparse.Namespace) -> int:
    return 0


def test_only_the_commands_marked_stoppable_take_over_the_stop_signals() -> None:
    # `stoppable` decides in `main` whether SIGINT/SIGTERM become a clean stop with exit 130/143 (or the
    # command's own code: `alas step` exits 75 so that Argo runs it again); every other command keeps Python's
    # default (KeyboardInterrupt, exit 130 with "alas: interrupted").
    root = argparse.ArgumentParser(prog="alas")
    commands = Commands(root.add_subparsers(dest="command"))
    commands.add("plain", _handler, help="Plain.")
    commands.add("solve", _handler, help="Solve.", stoppable=True)
    commands.add("step", _handler, help="Step.", stoppable=True, interrupted_exit=75)
    got = {name: (vars(args)["stoppable"], vars(args)["interrupted_exit"])
           for name in ("plain", "solve", "step") for args in [root.parse_args([name])]}
    assert got == {"plain": (False, None), "solve": (True, None), "step": (True, 75)}


@pytest.mark.parametrize(("argv", "stoppable", "interrupted_exit"), [
    (["log", "ls"], False, None),
    (["solve", "ft06"], True, None),
    (["step", "plan", "--run-id", "r"], True, 75),
])
def test_the_real_commands_say_whether_they_are_stoppable(argv: list[str], stoppable: bool,
                                                          interrupted_exit: int | None) -> None:
    args, _ = build_parser(argv).parse_known_args(argv)
    assert (args.stoppable, args.interrupted_exit) == (stoppable, interrupted_exit)


def test_a_group_is_listed_with_its_help_or_a_default_sentence() -> None:
    root = argparse.ArgumentParser(prog="alas")
    commands = Commands(root.add_subparsers(dest="command", metavar="COMMAND"))
    commands.group("log", "Inspect, compare and verify execution logs.")
    commands.group("extra")
    listing = " ".join(root.format_help().split())
    assert "log Inspect, compare and verify execution logs." in listing
    assert "extra extra commands" in listing


def test_a_group_without_its_command_prints_the_groups_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: alas log [-h] COMMAND") and "Inspect, compare and verify execution logs." in err


def test_an_unknown_option_of_a_group_prints_the_groups_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["log", "--bogus"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: alas log [-h] COMMAND") and "unrecognized arguments: --bogus" in err


def test_the_document_is_on_disk_before_its_name_points_at_it(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """fsync before the rename: a power loss right after it must not leave an empty file under the name."""
    import os

    from alas_argo.cli.app import write_json_file

    events: list[str] = []
    real_fsync, real_replace = os.fsync, Path.replace
    def fsync(fd: int) -> None:
        events.append("fsync")
        real_fsync(fd)

    def replace(self: Path, to: Path) -> Path:
        events.append("replace")
        return real_replace(self, to)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(Path, "replace", replace)
    write_json_file(tmp_path / "r.json", {"a": 1})
    assert events == ["fsync", "replace"] and (tmp_path / "r.json").read_text() == '{\n "a": 1\n}\n'
