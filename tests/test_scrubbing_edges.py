"""Edges of alas_argo.scrubbing left open by mutation testing: a secret containing another registered secret is
replaced whole (longest first, whatever the alphabet says), a value of exactly MIN_LENGTH characters is a
secret and one shorter is not, a document's non-string keys pass through untouched, and the stream the CLI
wraps stdout/stderr in really scrubs what is written through it while answering everything else as the real
stream. Each test starts from an empty registry: values registered by earlier tests cannot stand in."""

from __future__ import annotations

import io

import pytest

from alas_argo import scrubbing
from alas_argo.scrubbing import MARK, MIN_LENGTH, ScrubbingStream, register_secret, registered, scrub, scrub_text


@pytest.fixture(autouse=True)
def empty_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scrubbing, "_secrets", ())


def test_a_secret_containing_another_is_replaced_whole() -> None:
    """The inner secret sorts after the outer one alphabetically and is shorter: replacing it first would
    leave the outer secret's head and tail in the text ("aa-[redacted]-tail")."""
    inner, outer = "zz-secret-1234", "aa-zz-secret-1234-tail"
    register_secret(inner)
    register_secret(outer)
    assert registered() == (outer, inner)
    assert scrub_text(f"key={outer};other={inner}") == f"key={MARK};other={MARK}"
    # the same whichever was registered first
    scrubbing._secrets = ()
    register_secret(outer)
    register_secret(inner)
    assert scrub_text(outer) == MARK


def test_a_value_of_exactly_min_length_is_a_secret_and_a_shorter_one_is_not() -> None:
    exact, short = "8" * MIN_LENGTH, "7" * (MIN_LENGTH - 1)
    register_secret(exact)
    register_secret(short)
    register_secret(None)
    assert registered() == (exact,)
    assert scrub_text(f"{exact} {short}") == f"{MARK} {short}"


def test_registering_a_value_twice_keeps_it_once() -> None:
    register_secret("twice-registered-1")
    register_secret("twice-registered-1")
    assert registered() == ("twice-registered-1",)


def test_non_string_keys_pass_through_untouched() -> None:
    """A JSON-like document from Python code may be keyed by numbers (a job index): not a crash."""
    register_secret("doc-secret-0042")
    doc = {3: "doc-secret-0042", None: ("a", "doc-secret-0042"), "doc-secret-0042": 1.5}
    assert scrub(doc) == {3: MARK, None: ["a", MARK], MARK: 1.5}


def test_without_secrets_a_document_is_returned_as_is() -> None:
    doc = {"a": ["b"]}
    assert scrub(doc) is doc


def test_the_stream_scrubs_what_is_written_and_answers_as_the_real_stream() -> None:
    register_secret("stream-secret-9d3f")
    real = io.StringIO()
    stream = ScrubbingStream(real)
    text = "Bearer stream-secret-9d3f\n"
    assert stream.write(text) == len(text)  # the length as given, not as written
    assert stream.write("plain\n") == len("plain\n")
    assert real.getvalue() == f"Bearer {MARK}\nplain\n"
    assert stream.getvalue() == real.getvalue()  # anything else goes to the real stream
    assert stream.isatty() is False


def test_a_secret_written_in_pieces_is_scrubbed() -> None:
    """`print("token:", key[:5], key[5:], sep="")` writes the secret in two pieces: each alone is no secret, so
    the stream holds back an end that could begin one until the next write shows whether it does."""
    register_secret("split-secret-77aa")
    real = io.StringIO()
    stream = ScrubbingStream(real)
    print("token: split-", "secret", "-77aa!", sep="", file=stream)
    assert real.getvalue() == f"token: {MARK}!\n"
    stream.write("a split-sec")  # could begin the secret: held back ...
    assert real.getvalue().endswith("a ")
    stream.write("ond look\n")  # ... and written as it was once it does not
    assert real.getvalue().endswith("a split-second look\n")
    stream.write("ends in split-")
    stream.flush()  # at exit, or a progress bar's render: nothing is kept back for good
    assert real.getvalue().endswith("ends in split-")
