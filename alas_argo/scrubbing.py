"""Scrubbing configured secret values from everything the process writes or prints.

Redacting named fields (:mod:`alas_argo.log.redaction`) is not enough: a secret arrives wherever a third
party puts it, e.g. an LLM endpoint that echoes the API key in its 401 body, which then travels in an error
message into node-failure events and onto stderr. So every secret the settings hold (LLM API key, Argo and
controller tokens, S3 keys) is registered here when the settings are loaded, and its value is replaced by
:data:`MARK` in every event and idempotency record the log seals and in everything the CLI prints, whatever
field or message it arrives in.

Values shorter than :data:`MIN_LENGTH` characters are not registered: replacing them would scrub ordinary
words, and a secret that short protects nothing anyway.
"""

from __future__ import annotations

import threading
from typing import Any, TextIO

__all__ = ["MARK", "MIN_LENGTH", "ScrubbingStream", "register_secret", "registered", "scrub", "scrub_text"]

#: What a secret value is replaced with.
MARK = "[redacted]"
#: Shortest value treated as a secret.
MIN_LENGTH = 8

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()


def register_secret(value: str | None) -> None:
    """Scrub ``value`` from now on (ignored when None or shorter than :data:`MIN_LENGTH`)."""
    global _secrets
    if value is None or len(value) < MIN_LENGTH:
        return
    with _lock:
        if value not in _secrets:
            # Longest first: a secret containing another is replaced whole.
            _secrets = tuple(sorted({*_secrets, value}, key=len, reverse=True))


def registered() -> tuple[str, ...]:
    """The registered values (for tests and diagnostics; never print them)."""
    return _secrets


def scrub_text(text: str) -> str:
    """``text`` with every registered secret replaced by :data:`MARK`."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MARK)
    return text


def scrub(doc: Any) -> Any:
    """A copy of a JSON-like document with every registered secret replaced in its strings and keys
    (the document itself is left alone; without registered secrets it is returned as is)."""
    if not _secrets:
        return doc
    if isinstance(doc, str):
        return scrub_text(doc)
    if isinstance(doc, dict):
        return {scrub_text(k) if isinstance(k, str) else k: scrub(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [scrub(v) for v in doc]
    return doc


def _prefix_tail(text: str) -> int:
    """How many characters at the end of ``text`` start a registered secret (0 when none do)."""
    longest = 0
    for secret in _secrets:
        for k in range(min(len(secret) - 1, len(text)), longest, -1):
            if text.endswith(secret[:k]):
                longest = k
                break
    return longest


class ScrubbingStream:
    """A text stream that scrubs what is written through it and passes everything else to ``stream``
    (``isatty``, ``fileno``, ``encoding``: rich and argparse see the real terminal).

    A secret can arrive in two writes (``print`` of two arguments, a library writing a message in pieces): the end
    of a write that could begin a secret is held back until the next write shows whether it does, or until
    ``flush`` (which the interpreter calls on the standard streams at exit, as rich does after each render)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._held = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        """Write ``text`` with the secrets replaced; returns the length of ``text`` as given."""
        with self._lock:
            if not _secrets and not self._held:
                self.stream.write(text)
                return len(text)
            out = scrub_text(self._held + text)
            keep = _prefix_tail(out)
            out, self._held = (out[:-keep], out[-keep:]) if keep else (out, "")
            if out:
                self.stream.write(out)
        return len(text)

    def flush(self) -> None:
        """Write what was held back (it began no secret after all), then flush ``stream``."""
        with self._lock:
            held, self._held = self._held, ""
            if held:
                self.stream.write(held)
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
