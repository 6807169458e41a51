"""Server addresses a user gives (an Argo server, the repair controller, an S3 endpoint), checked when read.

A malformed one used to fail later and elsewhere: boto3 raised a bare ValueError ("Invalid endpoint") from the
first store call, so ``ALAS_STORE__S3_ENDPOINT=localhost:9000`` ended in a traceback.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["is_http_url"]


def is_http_url(url: str) -> bool:
    """Whether ``url`` is ``http(s)://host[:port][/path]``: a host, a port (if any) from 1 to 65535, and no
    query or fragment (which no server here reads, so one is a mistake); nothing an HTTP client cannot send
    either: white space or a control character (``https://a b`` was tried and "not reachable", a transient
    exit 75), or a host name IDNA cannot encode (a label past 63 characters failed as "refused")."""
    if any(c <= " " or c == "\x7f" for c in url):
        return False
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError for a port that is not a number or is past 65535
        (parts.hostname or "").encode("idna")
    except (ValueError, UnicodeError):
        return False
    return (parts.scheme in ("http", "https") and bool(parts.hostname) and (port is None or port > 0)
            and not parts.query and not parts.fragment)
