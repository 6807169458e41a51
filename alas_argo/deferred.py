"""Heavy third-party modules imported on first use, so that `alas --help` (which imports every command module to
build its parser) and commands that never solve or draw start without OR-Tools, pandas and matplotlib.

A module that uses one writes ``cp_model = deferred("ortools.sat.python.cp_model")`` where it would have
imported it, keeps the real import under ``TYPE_CHECKING`` for the type checker, and must not touch it at
import time (no module-level subclass of one of its classes: build those in a function). The domain's solver
modules take CP-SAT's from :mod:`alas_argo.jssp.searching` (``from alas_argo.jssp.searching import cp_model``).
The proxy imports the real module through :func:`importlib.import_module`, whose per-module import lock makes
the first use safe from the threads LCRP's search streams run in (``importlib.util.LazyLoader`` is not, on
Python 3.11).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

__all__ = ["deferred"]


class _Deferred(ModuleType):
    """Stands for a module until an attribute is read, then forwards every read to the real module."""

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        value = getattr(module, attr)
        # Later reads of this name skip the import machinery (``__getattr__`` runs only for missing names).
        setattr(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<deferred module {self.__name__!r}>"


def deferred(name: str) -> ModuleType:
    """``name``'s module when it is already imported, else a stand-in that imports it when first read."""
    return sys.modules.get(name) or _Deferred(name)
