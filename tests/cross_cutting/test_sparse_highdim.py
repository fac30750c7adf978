"""Sparse, high-dimensional data: the matrix-free W-step and the estimators that use it.

The iterative path (:class:`linsep._core.linalg.IterativeLeastSquares`) serves
``d + 1 > _DIRECT_MAX_COLUMNS``; here the threshold is lowered so that small
problems take it, and its answers are compared with the direct factorisation
on the same data.  Tolerances: a CG solve stops at the relative
normal-equations residual ``1e-10``; on these well-conditioned small problems
(condition numbers below ``1e3``) that bounds the weights' relative error by
about ``1e-7``, so ``1e-6`` is asserted.  IRLS systems (mhka, hkesa), whose
weights ``D`` span up to ``1/irls_floor``, lose up to that factor, and their
stopping iteration may shift by a few where ``|ΔJ|/J`` hovers near ``tol``
(as between the compiled and the NumPy loop): ``1e-3`` there.  The solver's own
tests (CG against the direct factorisation, unconverged solves reported) are
in ``test_linalg.py``.
"""

from fractions import Fraction
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from problems import duplicated_csr, sparse_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from linsep.designs.memory import InMemoryDesign
from linsep import make_classifier
from linsep._core.certificates import FIT_PROOF_RTOL
from linsep._core.signed_design import sign_normalized
from linsep._core.krylov import column_squares
from linsep._core.linalg import solver_limits
from linsep.estimators.registry import available_classifiers
from linsep.solvers.ho_kashyap.solver import ho_kashyap
from linsep.solvers.lsvm.solver import lagrangian_svm

HK_VARIANTS = ("hk", "modified_hk", "mhks", "mhka", "hkes", "hkesa")
IRLS = ("mhka", "hkesa")
LINEAR = HK_VARIANTS + ("mse", "lsvm", "widrow_hoff", "lms", "perceptron", "batch_perceptron", "kozinec", "sk")


def estimator(name, **params):
    model = make_classifier(name, **params)
    if "random_state" in model.get_params():
        model.set_params(random_state=0)
    return model


def fit_quietly(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


# --- dense direct vs sparse iterative, estimator by estimator ---------------------------------------


@pytest.mark.parametrize("name", HK_VARIANTS + ("mse", "lsvm"))
@pytest.mark.parametrize("noise", [0.0, 0.15])
def test_sparse_iterative_agrees_with_dense_direct(name, noise):
    X, y = sparse_problem(120, 30, noise=noise, seed=2)
    params = {"max_iter": 300} if name in HK_VARIANTS else {}  # hkesa would run to 10 000 on separable data
    direct = fit_quietly(estimator(name, **params), X.toarray(), y)
    with solver_limits(direct_max_columns=2):
        sparse = fit_quietly(estimator(name, **params), X, y)
    rtol = 1e-3 if name in IRLS else 1e-6
    scale = np.abs(direct.coef_).max()
    np.testing.assert_allclose(sparse.coef_, direct.coef_, rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(sparse.intercept_, direct.intercept_, rtol=0, atol=rtol * scale)
    assert getattr(sparse, "status_", None) == getattr(direct, "status_", None)
    if name in HK_VARIANTS:
        assert sparse.n_iter_ == direct.n_iter_ or name in IRLS


@pytest.mark.parametrize("name", ("hk", "modified_hk", "hkes", "mse"))
def test_minimum_norm_weights_when_d_exceeds_n(name):
    # C = 0, d + 1 > N: the direct path's SVD gives W = Y⁺B; so must CG.
    X, y = sparse_problem(25, 60, noise=0.2, seed=5)
    direct = fit_quietly(estimator(name, **({} if name == "mse" else {"stop_at_separation": False})),
                         X.toarray(), y)
    with solver_limits(direct_max_columns=2):
        sparse = fit_quietly(estimator(name, **({} if name == "mse" else {"stop_at_separation": False})), X, y)
    scale = np.abs(direct.coef_).max()
    np.testing.assert_allclose(sparse.coef_, direct.coef_, atol=1e-6 * scale)
    np.testing.assert_allclose(sparse.intercept_, direct.intercept_, atol=1e-6 * scale)


@pytest.mark.parametrize("inexact", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_hkes_records_the_validation_errors_of_the_minimum_norm_iterates(seed, inexact):
    # HKES reads the validation error of W_k = Y⁺(B_k + offset).  With d + 1 > N a preconditioned CG W-step
    # has the same Y W but another null-space component, hence other validation scores: the iterative path
    # must record the direct path's curve, whose value at k̂ is the returned model's validation error, with
    # inexact solves inside the iteration too (W_1, computed from zero, is solved in full).
    X, y = sparse_problem(160, 150, noise=0.2, seed=seed)
    X_fit, y_fit, X_val, y_val = X[:60], y[:60], X[60:], y[60:]
    params = {"max_iter": 30, "record_history": True}
    direct = estimator("hkes", **params).fit(X_fit.toarray(), y_fit, X_val=X_val.toarray(), y_val=y_val)
    with solver_limits(direct_max_columns=2, **({"inexact_min_entries": 1} if inexact else {})):
        sparse = estimator("hkes", **params).fit(X_fit, y_fit, X_val=X_val, y_val=y_val)
    np.testing.assert_array_equal(sparse.history_["validation_error"], direct.history_["validation_error"])
    assert (sparse.n_iter_, sparse.best_iter_, sparse.status_) == (direct.n_iter_, direct.best_iter_, direct.status_)
    assert sparse.history_["validation_error"][sparse.best_iter_ - 1] == np.mean(sparse.predict(X_val) != y_val)
    np.testing.assert_allclose(sparse.coef_, direct.coef_, atol=1e-6 * np.abs(direct.coef_).max())


@pytest.mark.parametrize("C", [None, 0.5])
def test_one_vs_rest_first_steps_solved_together_equal_each_problems_own(C):
    # YᵀY is the same for every one-vs-rest problem (labels square to 1): shared_first_weights solves all the
    # first W-steps at once, to the tolerance each problem's own full solve meets
    from linsep.solvers.ho_kashyap.solver import shared_first_weights
    from linsep._core.signed_design import signed_design

    X, _ = sparse_problem(90, 150, seed=3)
    labels = np.arange(90) % 3
    rows = np.arange(0, 90, 2)
    targets = np.where(labels[rows][:, None] == np.arange(3)[None, :], 1.0, -1.0)
    with solver_limits(direct_max_columns=2):
        together = shared_first_weights(X, targets, rows, C=C, b0=1.0)
        for k in range(3):
            Y = signed_design(X, targets[:, k], rows)
            alone = ho_kashyap(Y, C=C, b0=1.0, max_iter=0, Y_val=Y, stop_at_separation=False).weights
            np.testing.assert_allclose(together[k], alone, rtol=0, atol=1e-7 * np.abs(alone).max())
    assert shared_first_weights(X, targets, rows, C=C) is None  # the direct path: each problem factors its own


def test_one_vs_rest_hkes_on_wide_data_shares_its_first_steps():
    X, _ = sparse_problem(150, 200, seed=4)
    rng = np.random.default_rng(4)
    labels = np.argmax(X[:, :3].toarray() + 0.3 * rng.standard_normal((150, 3)), axis=1)
    with solver_limits(direct_max_columns=2):
        shared = estimator("hkes", max_iter=40).fit(X, labels)
        alone = estimator("hkes", max_iter=40)
        alone._share_first_solve = False  # private: each problem solves its own first step
        alone.fit(X, labels)
        binary = estimator("hkes", max_iter=40).fit(X, labels == 0)
        weighted = estimator("hkes", max_iter=40).fit(X, labels, sample_weight=np.full(150, 2.0))
    assert [plan.get("first_solve") for plan in shared._fit_plans] == ["shared"] * 3
    assert all("first_solve" not in plan for model in (alone, binary, weighted) for plan in model._fit_plans)
    np.testing.assert_allclose(shared.coef_, alone.coef_, rtol=0, atol=1e-6 * np.abs(alone.coef_).max())
    assert np.array_equal(shared.best_iter_, alone.best_iter_) and np.array_equal(shared.n_iter_, alone.n_iter_)
    for a, b in zip(shared.history_, alone.history_):
        np.testing.assert_array_equal(a["validation_error"], b["validation_error"])


@pytest.mark.parametrize("name", ("hk", "hkes"))
def test_minimum_norm_weights_of_tall_rank_deficient_data_through_the_peeled_map(name):
    # terms seen in no document, and rare terms seen only together: the null space that the map projects
    # out without a Krylov solve (linsep._core.null_space); the weights must be the direct path's W = Y⁺B
    X, y = sparse_problem(400, 60, density=0.05, noise=0.1, seed=3)
    X = sp.hstack([X, sp.csr_matrix((400, 2)), X[:, [5]] * 3.0, X[:, [7]] * -0.5], format="csr")
    params = {"stop_at_separation": False, "max_iter": 100}
    direct = fit_quietly(estimator(name, **params), X.toarray(), y)
    with solver_limits(direct_max_columns=2):
        sparse = fit_quietly(estimator(name, **params), X, y)
        signs = np.where(y == 1, 1.0, -1.0)
        result = ho_kashyap(sign_normalized(X, signs), max_iter=100, stop_at_separation=False)
    assert result.extra["minimum_norm_map"] == "peeled"
    scale = np.abs(direct.coef_).max()
    np.testing.assert_allclose(sparse.coef_, direct.coef_, atol=1e-6 * scale)
    np.testing.assert_allclose(sparse.intercept_, direct.intercept_, atol=1e-6 * scale)
    assert np.all(sparse.coef_[0, 60:62] == 0.0)  # the empty columns' weights


@pytest.mark.parametrize("update", ["margin", "weights"])
def test_solver_reports_cg_work(iterative, update):
    X, y = sparse_problem(200, 40, noise=0.1)
    result = ho_kashyap(sign_normalized(X, np.where(y == 1, 1.0, -1.0)), update=update, max_iter=50)
    assert result.extra["factorization"] == "cg"
    assert result.extra["cg_iterations"] > 0 and result.extra["cg_solves"] >= result.n_iter
    lsvm = lagrangian_svm(X, np.where(y == 1, 1.0, -1.0))
    assert lsvm.extra["factorization"] == "cg" and lsvm.extra["cg_iterations"] > 0


# --- honest verdicts ---------------------------------------------------------------------------------


def exact_proof_check(Y, u, rtol=FIT_PROOF_RTOL):
    """``u >= 0, u != 0`` and ``|Σ u_i Y_ij| <= rtol Σ u_i |Y_ij|`` for every column, in exact rational arithmetic."""
    Y = Y.toarray() if sp.issparse(Y) else Y
    if not (np.all(u >= 0) and np.any(u > 0)):
        return False
    for column in Y.T:
        terms = [Fraction(float(a)) * Fraction(float(b)) for a, b in zip(u, column) if a and b]
        if abs(sum(terms, Fraction(0))) > Fraction(rtol) * sum((abs(t) for t in terms), Fraction(0)):
            return False
    return True


@settings(max_examples=40, deadline=None)
@given(n=st.integers(4, 30), d=st.integers(1, 6), seed=st.integers(0, 10**6),
       duplicate=st.booleans(), update=st.sampled_from(["margin", "weights"]))
def test_iterative_verdicts_are_checked(n, d, seed, duplicate, update):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.6, random_state=seed, format="csr")
    y = rng.choice([-1.0, 1.0], n)
    if duplicate:  # a point with both labels: certainly not separable
        X = sp.vstack([X, X[:1]], format="csr")
        y = np.append(y, -y[0])
    Y = sign_normalized(X, y)
    with solver_limits(direct_max_columns=0):
        result = ho_kashyap(Y, update=update, max_iter=2000)
    assert result.extra["factorization"] == "cg"
    if result.status == "not_separable":
        assert exact_proof_check(Y, result.certificate)
    if result.status == "separable":
        assert np.all(Y @ result.weights > 0)
    if duplicate:
        assert result.status != "separable"


def test_iterative_verdicts_match_the_direct_solver(iterative):
    # The same statuses as the exact factorisation on small problems, with proofs that pass the exact check
    # (some only once the rounding-level entries of −E are dropped: one alone in a column fails that column).
    statuses = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n, d = int(rng.integers(4, 30)), int(rng.integers(1, 6))
        X = sp.random(n, d, density=0.6, random_state=seed, format="csr")
        y = rng.choice([-1.0, 1.0], n)
        if seed % 2:
            X, y = sp.vstack([X, X[:1]], format="csr"), np.append(y, -y[0])
        Y = sign_normalized(X, y)
        result = ho_kashyap(Y, max_iter=2000)
        with solver_limits(direct_max_columns=2000):
            assert ho_kashyap(Y.toarray(), max_iter=2000).status == result.status
        if result.status == "not_separable":
            assert exact_proof_check(Y, result.certificate)
        statuses.append(result.status)
    assert statuses.count("not_separable") >= 20


def test_separable_sparse_data_are_separated(iterative):
    X, y = sparse_problem(300, 40, seed=7)
    for name in ("hk", "modified_hk"):
        model = make_classifier(name).fit(X, y)
        assert model.status_ == "separable"
        assert np.all(model.predict(X) == y)


class NoProofPasses(InMemoryDesign):
    """The in-memory design of ``Y`` on which every candidate proof fails the check."""

    def checked_certificate(self, u):
        return None


def test_unchecked_candidate_is_not_a_proof(iterative):
    X = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]))
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])  # (1, 1) in both classes
    Y = sign_normalized(X, y)
    assert ho_kashyap(Y).status == "not_separable"
    result = ho_kashyap(NoProofPasses(Y))  # a design is used as given
    assert result.status != "not_separable" and result.certificate is None


# --- no densification ----------------------------------------------------------------------------


class NoDenseCSR(sp.csr_matrix):
    """A CSR matrix that refuses to be densified."""

    def toarray(self, *args, **kwargs):
        raise AssertionError("X was densified")

    def todense(self, *args, **kwargs):
        raise AssertionError("X was densified")


@pytest.fixture
def no_large_dense(monkeypatch):
    """Any sparse-to-dense conversion of more than 20 000 entries fails."""
    from scipy.sparse import _compressed, _coo

    def guard(original):
        def toarray(self, *args, **kwargs):
            if self.shape[0] * self.shape[1] > 20_000:
                raise AssertionError(f"a sparse matrix of shape {self.shape} was densified")
            return original(self, *args, **kwargs)
        return toarray

    monkeypatch.setattr(_compressed._cs_matrix, "toarray", guard(_compressed._cs_matrix.toarray))
    # SciPy >= 1.11: coo_array and coo_matrix share _coo_base; SciPy 1.10: coo_array derives from coo_matrix
    coo = getattr(_coo, "_coo_base", None) or _coo.coo_matrix
    monkeypatch.setattr(coo, "toarray", guard(coo.toarray))


@pytest.mark.parametrize("name", LINEAR)
def test_sparse_fit_never_densifies(name, no_large_dense):
    # d = 3000 > the direct solver's 2000 columns: the default path, no threshold patched
    X, y = sparse_problem(200, 3000, density=0.005, seed=11, noise=0.05)
    model = estimator(name, **({"max_iter": 20} if "max_iter" in make_classifier(name).get_params() else {}))
    fit_quietly(model, NoDenseCSR(X), y)
    assert model.predict(NoDenseCSR(X)).shape == (200,)


def test_every_registered_estimator_accepts_sparse_input():
    # the command line passes svmlight data on as sparse matrices, never densified for an estimator
    assert all(make_classifier(name).__sklearn_tags__().input_tags.sparse for name in available_classifiers())


@pytest.mark.parametrize("name", ("hk", "mhka", "hkes", "mse", "lsvm"))
def test_peak_memory_far_below_a_dense_gram(name):
    # d = 20 000: a d×d Gram matrix alone would take 3.2 GB, X dense 320 MB.  Drawn with a Generator:
    # sp.random with an integer seed shuffles all N·d = 4·10⁷ cell indices (6 s); a Generator draws 20 000.
    X, y = sparse_problem(2000, 20_000, density=5e-4, seed=np.random.default_rng(13), noise=0.05)
    model = estimator(name, **({"max_iter": 10} if "max_iter" in make_classifier(name).get_params() else {}))
    tracemalloc.start()
    try:
        fit_quietly(model, X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.1f} MiB"


# --- sparse matrices with duplicate entries (scipy keeps them; one cell's value is their sum) --------


def test_duplicate_entries_in_kernel_columns_and_column_statistics():
    from linsep._core.signed_design import _column_maxabs
    from linsep.kernels import KernelColumnCache

    X, dense = duplicated_csr()
    for kernel in ("linear", "rbf"):
        sparse_cache, dense_cache = KernelColumnCache(X, kernel=kernel), KernelColumnCache(dense, kernel=kernel)
        for j in range(2):
            np.testing.assert_allclose(sparse_cache.column(j), dense_cache.column(j), rtol=1e-12)
    np.testing.assert_array_equal(_column_maxabs(X), _column_maxabs(dense))
    np.testing.assert_allclose(column_squares(X, None), column_squares(dense, None))
    assert not X.has_canonical_format  # still the caller's own
