"""The engines package's public names, pinned; and the README's matrix is the current one."""

from __future__ import annotations

import pytest

import alas_argo.engines as engines
from alas_argo.engines.conformance import matrix_markdown
from alas_argo.engines.rendering import repo_root


def test_exported_names() -> None:
    assert sorted(engines.__all__) == ["Feature", "LintProblem", "MATRIX", "Support", "UnsupportedFeature",
                                       "from_argo", "from_asl", "lint_argo", "matrix_json", "matrix_markdown",
                                       "to_argo", "to_asl"]
    assert all(hasattr(engines, n) for n in engines.__all__)


@pytest.mark.parametrize("readme", ["README.md", "workflows/README.md"])
def test_readme_shows_the_current_matrix(readme: str) -> None:
    text = (repo_root() / readme).read_text()
    assert matrix_markdown() in text, f"regenerate the matrix in {readme} (alas engines matrix --markdown)"
