"""The loopback S3 server (moto, server mode) standing in for MinIO."""

from tests.s3server import s3_bucket, s3_server

__all__ = ["s3_bucket", "s3_server"]
