"""Server addresses: what the Argo server, controller and S3 endpoint settings take."""

from __future__ import annotations

import pytest

from alas_argo.addresses import is_http_url


@pytest.mark.parametrize("url", ["http://minio:9000", "https://argo.example.com", "http://127.0.0.1:2746/",
                                 "https://h:1/base/path", "http://[::1]:9000", "http://h:65535"])
def test_a_server_address_is_taken(url: str) -> None:
    assert is_http_url(url)


@pytest.mark.parametrize("url", [
    "localhost:9000",  # no scheme: boto3's "Invalid endpoint"
    "minio", "", "http://", "http://:9000",  # no host
    "ftp://h:21", "s3://bucket",  # not HTTP
    "http://h:0", "http://h:99999", "http://h:abc", "http://h:-1",  # no usable port
    "http://h:9000?x=1", "http://h:9000#top",  # a query or fragment no server here reads
    "https://a b", "http://h:9000/a b", "http://h\t:9000", "http://h:9000/\x7f",  # nothing a client can send
    "https://" + "x" * 64 + ".example", "http://a..b:9000",  # host labels IDNA cannot encode
    "http://[::1",  # an unclosed bracket
])
def test_anything_else_is_refused(url: str) -> None:
    assert not is_http_url(url)
