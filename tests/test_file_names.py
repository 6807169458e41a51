"""`file_names`: a name the system cannot look up is an answer (not found), not an OSError; a file is read with a
bound, in reads sized by what is expected rather than by the bound."""

from __future__ import annotations

import http.client
import io
import os
from pathlib import Path

import pytest

from alas_argo.errors import InputError
from alas_argo.file_names import found, read_answer, read_at_most, read_limited, size_of


def test_found_answers_for_files_directories_and_names_that_cannot_be_looked_up(tmp_path: Path) -> None:
    (tmp_path / "f.json").write_text("{}")
    assert found(tmp_path / "f.json") and found(tmp_path / "f.json", file=True)
    assert found(tmp_path) and not found(tmp_path, file=True)  # a directory exists but is no file
    assert not found(tmp_path / "missing") and not found(tmp_path / "missing", file=True)
    long = tmp_path / ("x" * 300)  # ENAMETOOLONG: Path.exists() and is_file() raise OSError
    assert not found(long) and not found(long, file=True) and not found(long, directory=True)
    assert found(tmp_path, directory=True) and not found(tmp_path / "f.json", directory=True)
    assert not found(tmp_path / "missing", directory=True)


def test_read_limited_reads_up_to_the_limit_and_refuses_past_it(tmp_path: Path) -> None:
    f = tmp_path / "f.json"
    f.write_bytes(b"x" * 10)
    assert read_limited(f, 10) == b"x" * 10
    with pytest.raises(InputError) as raised:
        read_limited(f, 9)
    assert raised.value.where == str(f)
    assert raised.value.message == "larger than 0 MiB (or never ends): not an input this reads"
    with pytest.raises(FileNotFoundError):
        read_limited(tmp_path / "missing")


def test_an_input_that_never_ends_is_refused_after_the_limit() -> None:
    # /dev/zero given as a schedule was read whole: the process grew to 24 GB and the kernel killed it.
    with pytest.raises(InputError) as raised:
        read_limited(Path("/dev/zero"))
    assert raised.value.message == "larger than 128 MiB (or never ends): not an input this reads"


class _Spy(io.BytesIO):
    """A stream that records the size of every read asked of it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.asked: list[int] = []

    def read(self, n: int | None = -1, /) -> bytes:
        self.asked.append(-1 if n is None else n)
        return super().read(n)


def test_a_stream_is_read_whole_in_small_pieces_never_in_one_read_of_the_bound() -> None:
    """Guards memory: one read of the whole bound reserves it first (128-256 MiB for every small file: a
    MemoryError from every log read under `ulimit -v 800000`, and about 10 µs a read)."""
    data = bytes(range(256)) * 1000  # 256,000 bytes, unknown length: 4 pieces and the empty read at the end
    spy = _Spy(data)
    assert read_at_most(spy, 2**30) == data
    assert spy.asked == [2**16 + 1] + [2**16] * 3 + [2**16] and max(spy.asked) < 2**20


def test_the_expected_size_sizes_the_first_read() -> None:
    spy = _Spy(b"x" * 500)
    assert read_at_most(spy, 2**30, expected=500) == b"x" * 500
    assert spy.asked == [501, 2**16]  # the whole file, then the read that finds its end


@pytest.mark.parametrize(("size", "limit", "expected", "got"), [
    (10, 10, None, 10), (11, 10, None, 11), (11, 10, 11, 11), (10**6, 10, 10**6, 11), (10**6, 10, 3, 11)])
def test_never_more_than_one_byte_past_the_limit_whatever_is_expected(size: int, limit: int, expected: int | None,
                                                                       got: int) -> None:
    spy = _Spy(b"y" * size)
    assert len(read_at_most(spy, limit, expected=expected)) == got
    assert sum(n for n in spy.asked) <= limit + 1 + 2**16


def test_size_of_knows_regular_files_only(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"abc")
    with f.open("rb") as stream:
        assert size_of(stream) == 3
    with open("/dev/zero", "rb") as stream:
        assert size_of(stream) is None
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as stream, os.fdopen(write_end, "wb"):
        assert size_of(stream) is None
    assert size_of(io.BytesIO(b"abc")) is None


class _Answer(_Spy):
    """An HTTP answer: a body and the headers that came with it."""

    def __init__(self, body: bytes, headers: dict[str, str]) -> None:
        super().__init__(body)
        self.headers = headers


@pytest.mark.parametrize(("body", "announced", "read"), [
    (b"x" * 10, "10", b"x" * 10), (b"x" * 10, None, b"x" * 10), (b"x" * 100, "100", b"x" * 21)])
def test_an_answer_is_read_as_announced_and_never_past_the_limit(body: bytes, announced: str | None,
                                                                  read: bytes) -> None:
    answer = _Answer(body, {"Content-Length": announced} if announced else {})
    assert read_answer(answer, 20) == read
    if announced == "10":
        assert answer.asked[0] == 11  # the first read sized by the announced length


def test_an_answer_shorter_than_it_announced_is_an_incomplete_read() -> None:
    # A bounded read returns what came before the connection closed: the announced length is the only witness.
    with pytest.raises(http.client.IncompleteRead) as cut:
        read_answer(_Answer(b'{"versio', {"Content-Length": "100"}), 2**20)
    assert (cut.value.partial, cut.value.expected) == (b'{"versio', 92)
