"""The LLM endpoint's command-line flags, shared by `alas run`, `alas llm ping` and `alas bench llm`.

The endpoint comes from ``--llm-base-url`` / ``--llm-model``, ``ALAS_LLM__*`` or ``OPENAI_BASE_URL`` /
``OPENAI_API_KEY`` (the key is never a flag: it would land in shell history and process lists).
"""

from __future__ import annotations

import argparse

from alas_argo.bounds import MAX_RETRIES
from alas_argo.cli.flag_values import finite_float, seconds, whole
from alas_argo.settings import Settings, load_settings

__all__ = ["add_llm_arguments", "llm_settings_from_args"]


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the endpoint flags (``--llm-base-url``, ``--llm-model``, ``--llm-timeout``, ``--llm-retries``)."""
    parser.add_argument("--llm-base-url", metavar="URL",
                        help="OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 (else OPENAI_BASE_URL)")
    parser.add_argument("--llm-model", metavar="NAME", help="model name (default: settings, gpt-4o-mini)")
    parser.add_argument("--llm-timeout", type=seconds, metavar="SECONDS", help="seconds per HTTP call")
    parser.add_argument("--llm-retries", type=whole(0, MAX_RETRIES), metavar="N",
                        help="retries on 429 / 5xx / timeouts")
    parser.add_argument("--llm-temperature", type=finite_float, metavar="T",
                        help="sampling temperature (default 0; the paper's baselines used 1.0)")


def llm_settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings with the endpoint flags applied over the environment."""
    return load_settings(llm={"base_url": getattr(args, "llm_base_url", None),
                              "model": getattr(args, "llm_model", None),
                              "timeout": getattr(args, "llm_timeout", None),
                              "max_retries": getattr(args, "llm_retries", None),
                              "temperature": getattr(args, "llm_temperature", None)})
