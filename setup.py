"""The one part of the build pyproject.toml cannot declare with setuptools 68: the optional C extension.

``alas_argo.jssp.repair._tabu`` (the tabu search of LCRP's tabu first edit) is built when a C compiler is there
and skipped with a warning when it is not (``optional=True``): the package stays installable everywhere, and
LCRP falls back to its re-dispatch first edit with a note (alas_argo/jssp/repair/tabu.py). Everything else about
the package is in pyproject.toml.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "alas_argo.jssp.repair._tabu",
            sources=["alas_argo/jssp/repair/_tabu.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
