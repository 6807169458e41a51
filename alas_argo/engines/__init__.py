"""Compilers from the IR to Argo Workflows (via Hera's models) and Amazon States Language, their reverse
parsers, the conformance matrix, the Argo lint, rendering of the golden files and `alas submit`."""

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo
from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl
from alas_argo.engines.conformance import MATRIX, Feature, Support, UnsupportedFeature, matrix_json, matrix_markdown
from alas_argo.engines.lint import LintProblem, lint_argo

__all__ = [
    "MATRIX",
    "Feature",
    "LintProblem",
    "Support",
    "UnsupportedFeature",
    "from_argo",
    "from_asl",
    "lint_argo",
    "matrix_json",
    "matrix_markdown",
    "to_argo",
    "to_asl",
]
