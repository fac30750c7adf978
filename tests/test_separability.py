"""check_separability: verdicts agree with an exact LP test; certificates are valid proofs."""

import numpy as np
import pytest
import scipy.sparse as sp
from problems import wide_margin_data
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from linsep import check_separability
from linsep._core.plan import forced_plan
from linsep._core.signed_design import sign_normalized
from linsep._core.result import NOT_SEPARABLE, SolveResult
from linsep.separability import proof_residual


def lp_separable(X, y):
    """Independent exact test: is there W with diag(y)[X, 1] W >= 1?"""
    Y = sign_normalized(X, np.where(y == np.unique(y)[1], 1, -1))
    res = linprog(np.zeros(Y.shape[1]), A_ub=-Y, b_ub=-np.ones(len(y)), bounds=(None, None), method="highs")
    return res.status == 0


def assert_valid_certificate(result, X, y):
    Y = sign_normalized(X, np.where(y == result.classes[1], 1, -1))
    c = result.certificate
    if result.separable:
        W = np.r_[c.coef, c.intercept]
        assert (Y @ W > 0).all()
        assert c.margin == pytest.approx((Y @ W).min() / np.linalg.norm(c.coef))
    else:
        assert (c.u >= 0).all() and c.u.sum() > 0
        assert c.support.size <= X.shape[1] + 2  # Carathéodory: reduced before it is reported
        assert np.abs(Y.T @ c.u).max() <= 1e-8 * (np.abs(Y).T @ c.u).max()


def test_xor_not_separable_by_ho_kashyap_proof():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    y = np.array(["a", "a", "b", "b"])
    result = check_separability(X, y)
    assert not result.separable and result.method == "ho_kashyap"
    assert_valid_certificate(result, X, y)
    assert "not separable" in result.summary()


def test_separable_with_margin():
    X = np.array([[0.0, 0.0], [0.0, 1.0], [2.0, 0.0], [2.0, 1.0]])
    y = np.array([0, 0, 1, 1])
    result = check_separability(X, y)
    assert result.separable
    assert_valid_certificate(result, X, y)
    assert 0 < result.certificate.margin <= 1.0 + 1e-12  # the maximal margin is 1


def test_linear_programming_decides_when_ho_kashyap_budget_runs_out():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, -1)
    result = check_separability(X, y, max_iter=0)
    assert result.method == "linear_programming"
    assert result.separable == lp_separable(X, y)
    assert_valid_certificate(result, X, y)


def test_duplicate_point_with_both_labels_is_not_separable():
    X = np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 0.0]])
    y = np.array([1, -1, 1])
    result = check_separability(X, y)
    assert not result.separable
    assert_valid_certificate(result, X, y)


def test_sparse_input():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    result = check_separability(sp.csr_matrix(X), [1, 1, -1, -1])
    assert not result.separable


def test_more_than_two_classes_gives_one_verdict_per_class():
    result = check_separability(np.eye(3), [0, 1, 2])
    assert list(result.one_vs_rest) == [0, 1, 2] and result.separable


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(4, 40), d=st.integers(1, 4),
       noise=st.sampled_from([0.0, 0.0, 0.3, 1.0]))
def test_agrees_with_exact_lp_and_certificate_is_valid(seed, n, d, noise):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X @ rng.normal(size=d) + rng.normal(scale=0.5) + noise * rng.normal(size=n)
    y = np.where(score > 0, 1, -1)
    if len(np.unique(y)) < 2:
        y[0] = -y[0]
    result = check_separability(X, y)
    assert result.separable == lp_separable(X, y)
    assert_valid_certificate(result, X, y)


def test_one_class_is_an_error():
    with pytest.raises(ValueError, match="two classes; got 1"):
        check_separability(np.eye(3), [1, 1, 1])


def test_proof_residual_of_a_signed_design():
    Y = sign_normalized(np.array([[1.0], [2.0], [3.0]]), np.array([1.0, -1.0, 1.0]))
    u = np.array([1.0, 2.0, 1.0])  # Σ u_i y_i (x_i, 1) = 0
    assert proof_residual(Y, u) == 0.0 and proof_residual(sp.csr_matrix(Y), u) == 0.0
    assert proof_residual(Y, np.ones(3)) > 0.1


def test_undecided_when_no_candidate_passes(capsys):
    from types import SimpleNamespace

    X, y = wide_margin_data()
    plan = {  # HK claims a proof that fails the check, and the linear programs fail
        "ho_kashyap": lambda Y, **kw: SolveResult(np.zeros(Y.shape[1]), 3, NOT_SEPARABLE,
                                                  certificate=np.ones(Y.shape[0])),
        "linprog": lambda *a, **kw: SimpleNamespace(status=2, x=None)}
    with forced_plan(separability=plan):
        result = check_separability(X, y)
    assert check_separability(X, y).separable is True  # outside the block: linsep's own solvers
    assert result.separable is None and result.certificate is None and result.status == "undecided"
    assert result.summary().startswith("undecided")
