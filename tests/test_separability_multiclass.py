"""Separability beyond two classes, and proofs reduced to at most d + 2 rows (Carathéodory)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris

from linsep import check_separability
from linsep._core.certificates import decision_scores, is_proof, separates
from linsep.separability import MulticlassSeparabilityResult, NonSeparabilityProof


def _check(verdict, X, y):
    """The certificate passes the independent check of linsep._core.certificates, a proof on <= d + 2 rows."""
    signs = np.where(y == verdict.classes[1], 1, -1)
    c = verdict.certificate
    if verdict.separable:
        rows = np.flatnonzero((y == verdict.classes[1]) | (y == verdict.classes[0]) | (verdict.classes[0] == "rest"))
        assert separates(decision_scores(X[rows], c.coef, c.intercept).ravel(), signs[rows])
    else:
        assert isinstance(c, NonSeparabilityProof) and c.support.size <= X.shape[1] + 2
        assert is_proof(X, signs, c.u)


def test_iris_one_verdict_per_class_with_checked_certificates():
    X, y = load_iris(return_X_y=True)
    result = check_separability(X, y)
    assert isinstance(result, MulticlassSeparabilityResult)
    assert {k: v.status for k, v in result.one_vs_rest.items()} == {
        0: "separable", 1: "not_separable", 2: "not_separable"}
    assert result.separable is False and result.pairwise is None
    for verdict in result.one_vs_rest.values():
        _check(verdict, X, y)
    assert len(result.summary().splitlines()) == 3 and "rows" in result.summary()


def test_iris_pairwise():
    X, y = load_iris(return_X_y=True)
    result = check_separability(X, y, pairwise=True)
    assert {k: v.status for k, v in result.pairwise.items()} == {
        (0, 1): "separable", (0, 2): "separable", (1, 2): "not_separable"}
    for verdict in result.pairwise.values():
        _check(verdict, X, y)
    proof = result.pairwise[1, 2].certificate
    assert set(y[proof.support]) <= {1, 2}  # indices into the whole X


@pytest.mark.parametrize("seed", range(6))
def test_large_proofs_are_reduced(seed):
    """Overlapping clouds: Ho–Kashyap's proof uses nearly every point; the reported one at most d + 2."""
    rng = np.random.default_rng(seed)
    d = 1 + seed % 3
    X = rng.normal(size=(300, d))
    y = rng.integers(0, 2, 300)
    verdict = check_separability(sp.csr_matrix(X) if seed % 2 else X, y)
    assert verdict.separable is False
    _check(verdict, X, y)


def test_to_dict_is_json_and_names_the_rows():
    import json

    X, y = load_iris(return_X_y=True)
    data = json.loads(json.dumps(check_separability(X, y).to_dict()))
    assert data["status"] == "not_separable" and data["classes"] == [0, 1, 2]
    first, second = data["one_vs_rest"][:2]
    assert first["certificate"]["type"] == "hyperplane" and len(first["certificate"]["coef"]) == 4
    proof = second["certificate"]
    assert proof["type"] == "proof" and len(proof["rows"]) == len(proof["u"]) <= 6
    u = np.zeros(len(y))
    u[proof["rows"]] = proof["u"]
    assert is_proof(X, np.where(y == 1, 1, -1), u)
