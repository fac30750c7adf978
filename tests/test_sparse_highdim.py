"""Sparse, high-dimensional data: the matrix-free W-step and the estimators that use it.

The iterative path (:class:`linsep._linalg.IterativeLeastSquares`) serves
``d + 1 > _DIRECT_MAX_COLUMNS``; here the threshold is lowered so that small
problems take it, and its answers are compared with the direct factorisation
on the same data.  Tolerances: a CG solve stops at the relative
normal-equations residual ``1e-10``; on these well-conditioned small problems
(condition numbers below ``1e3``) that bounds the weights' relative error by
about ``1e-7``, so ``1e-6`` is asserted.  IRLS systems (mhka, hkesa), whose
weights ``D`` span up to ``1/irls_floor``, lose up to that factor, and their
stopping iteration may shift by a few where ``|ΔJ|/J`` hovers near ``tol``
(as between the compiled and the NumPy loop): ``1e-3`` there.
"""

from fractions import Fraction
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import linsep._linalg as linalg
from linsep.designs.memory import InMemoryDesign
from linsep import make_classifier
from linsep._certificates import FIT_PROOF_RTOL
from linsep._design import sign_normalized
from linsep._linalg import IterativeLeastSquares, LeastSquaresFactor, least_squares_solver, solver_limits
from linsep._registry import available_classifiers
from linsep.separability import proof_residual
from linsep.solvers.ho_kashyap import ho_kashyap
from linsep.solvers.lsvm import lagrangian_svm
from linsep.solvers.mse import mse

HK_VARIANTS = ("hk", "modified_hk", "mhks", "mhka", "hkes", "hkesa")
IRLS = ("mhka", "hkesa")
LINEAR = HK_VARIANTS + ("mse", "lsvm", "widrow_hoff", "lms", "perceptron", "batch_perceptron", "kozinec", "sk")


@pytest.fixture
def iterative():
    """Every least-squares system (at least the bias and one feature) goes to the iterative solver."""
    with solver_limits(direct_max_columns=1):
        yield


def sparse_problem(n, d, density=0.2, seed=0, noise=0.0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    score = X @ rng.standard_normal(d)
    y = (score > np.median(score)).astype(int)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y


def estimator(name, **params):
    model = make_classifier(name, **params)
    if "random_state" in model.get_params():
        model.set_params(random_state=0)
    return model


def fit_quietly(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


# --- the solver itself ------------------------------------------------------------------------------


@pytest.mark.parametrize("n, d", [(150, 40), (30, 80)])  # full column rank / d + 1 > N
@pytest.mark.parametrize("ridge", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_iterative_matches_direct(n, d, ridge, weighted):
    X, y = sparse_problem(n, d)
    X = sp.hstack([X, 2.0 * X[:, [4]]], format="csr")  # collinear columns: rank-deficient for C = 0
    Y = sign_normalized(sp.csr_matrix(X), np.where(y == 1, 1.0, -1.0))
    rng = np.random.default_rng(1)
    D = rng.uniform(0.1, 2.0, n) if weighted else None
    r = rng.uniform(0.5, 2.0, n)
    direct = LeastSquaresFactor(Y, D, ridge)
    solver = IterativeLeastSquares(Y, D, ridge)
    W = solver.solve(r)
    assert solver.converged and solver.residual <= linalg.CG_RTOL
    np.testing.assert_allclose(W, direct.solve(r), rtol=0, atol=1e-6 * np.abs(W).max())
    # preconditioned (minimum M-norm) solves have the same fitted values; minimum_norm_part maps them back
    fast = IterativeLeastSquares(Y, D, ridge, minimum_norm=False)
    W_fast = fast.solve(r)
    np.testing.assert_allclose(Y @ W_fast, Y @ W, atol=1e-6 * np.abs(Y @ W).max())
    if ridge == 0:
        np.testing.assert_allclose(fast.minimum_norm_part(W_fast), W, atol=1e-6 * np.abs(W).max())


def test_minimum_norm_on_rank_deficient_data():
    # d + 1 > N: the answer is Y⁺r, orthogonal to the null space of Y
    X, y = sparse_problem(20, 60, seed=3)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    W = IterativeLeastSquares(Y).solve(np.ones(20))
    np.testing.assert_allclose(W, np.linalg.pinv(Y.toarray()) @ np.ones(20), atol=1e-8)


def test_warm_start_and_reweighting_reuse_the_previous_solution():
    X, y = sparse_problem(200, 50)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    solver = IterativeLeastSquares(Y)  # C = 0: D = 2I below has the same solution
    b = np.ones(200)
    solver.solve(b)
    first = solver.iterations
    solver.solve(b)  # the same right-hand side: the warm start is the answer already
    assert solver.iterations == first
    solver.solve(b * (1 + 1e-6 * np.arange(200) / 200))
    assert solver.iterations - first < first  # from 1e-6 to 1e-10, not from 1
    solver.solve(b)
    reweighted = solver.reweighted(np.full(200, 2.0))  # D = 2I: the same solution, warm-started from it
    reweighted.solve(b)
    assert reweighted.iterations == solver.iterations


def test_factory_threshold():
    X, y = sparse_problem(50, 30)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    assert isinstance(least_squares_solver(Y), LeastSquaresFactor)
    with solver_limits(direct_max_columns=30):
        assert isinstance(least_squares_solver(Y), IterativeLeastSquares)
        assert isinstance(least_squares_solver(Y, gram=(Y.T @ Y).toarray()), LeastSquaresFactor)


def test_width_alone_decides_the_iterative_path():
    # The widest direct system's Gram matrix fits the dense budget; the budget governs only the SVD copy.
    assert 8 * linalg._DIRECT_MAX_COLUMNS**2 <= linalg._DENSE_BUDGET_BYTES
    with solver_limits(dense_budget_bytes=8):
        assert not linalg.too_wide_for_direct(linalg._DIRECT_MAX_COLUMNS)
        assert linalg.too_wide_for_direct(linalg._DIRECT_MAX_COLUMNS + 1)


def test_no_dense_svd_copy_of_large_sparse_data():
    # C = 0, collinear columns, few of them: the direct path's SVD would densify Y (8·N·p bytes); beyond
    # the budget (but with a Gram matrix inside it), CG gives the same minimum-norm answer
    X, y = sparse_problem(200, 30, seed=3)
    X = sp.hstack([X, 2.0 * X[:, [4]]], format="csr")
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    direct = least_squares_solver(Y)
    assert direct.method == "svd"
    with solver_limits(dense_budget_bytes=8 * 32**2):
        solver = least_squares_solver(Y)
    assert solver.method == "cg"
    np.testing.assert_allclose(solver.solve(np.ones(200)), direct.solve(np.ones(200)), atol=1e-8)


def test_unconverged_solve_is_reported(iterative):
    X, y = sparse_problem(100, 40)
    with solver_limits(cg_max_iter=1):
        result = mse(sign_normalized(X, np.where(y == 1, 1.0, -1.0)))
        assert result.extra["factorization"] == "cg" and result.status == "max_iter"
        with pytest.warns(ConvergenceWarning):
            make_classifier("mse").fit(X, y)


def test_unconverged_column_of_a_multi_right_hand_side_is_reported(iterative, monkeypatch):
    X, y = sparse_problem(100, 40)
    A = sign_normalized(X, np.ones(100))
    with solver_limits(cg_max_iter=1):
        solver = least_squares_solver(A)
    solver.solve(np.column_stack([np.ones(100), np.zeros(100)]))  # the last column solves at once
    assert not solver.converged

    # The multi-class linear machine: only the first class's solve stops short.
    pcg, calls = linalg._pcg, []

    def first_solve_short(matvec, b, x, inv_diag, rtol, max_iter, **kwargs):
        calls.append(1)
        return pcg(matvec, b, x, inv_diag, rtol, 1 if len(calls) == 1 else max_iter, **kwargs)

    monkeypatch.setattr(linalg, "_pcg", first_solve_short)
    labels = np.arange(100) % 3
    with pytest.warns(ConvergenceWarning):
        model = make_classifier("mse").fit(X, labels)
    assert list(model.status_) == ["max_iter"] * 3 and len(calls) == 3


def test_unconverged_minimum_norm_projection_is_reported(iterative, monkeypatch):
    X, y = sparse_problem(100, 20, noise=0.15)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    reference = ho_kashyap(Y, tol=1e-3)
    assert reference.status == "converged"
    pcg = linalg._pcg

    def projection_short(matvec, b, x, inv_diag, rtol, max_iter, **kwargs):
        # the projection on the row space is the only unpreconditioned solve of a C = 0 fit
        return pcg(matvec, b, x, inv_diag, rtol, 1 if inv_diag is None else max_iter, **kwargs)

    monkeypatch.setattr(linalg, "_pcg", projection_short)
    result = ho_kashyap(Y, tol=1e-3)
    assert result.status == "max_iter"
    # the weights are kept unprojected: their fitted values are the iteration's own
    np.testing.assert_allclose(Y @ result.weights, Y @ reference.weights, atol=1e-8)


def test_irls_system_that_turns_iterative_is_checked(monkeypatch):
    # A reweighted system that Cholesky refuses and whose dense SVD would be too large goes to CG
    # in mid-fit; that factor's unconverged solves must still be reported.
    X, y = sparse_problem(100, 20, noise=0.15)
    Y = sign_normalized(X, np.where(y == 1, 1.0, -1.0))
    init = LeastSquaresFactor.__init__

    def direct_unless_weighted(self, Y, sample_weight=None, ridge=0.0, gram=None):
        if sample_weight is not None:
            raise linalg._TooLargeForDirect
        init(self, Y, sample_weight, ridge, gram)

    monkeypatch.setattr(LeastSquaresFactor, "__init__", direct_unless_weighted)
    assert ho_kashyap(Y, C=0.1, loss="absolute").status == "converged"
    with solver_limits(cg_max_iter=1):
        result = ho_kashyap(Y, C=0.1, loss="absolute")
    assert result.extra["factorization"] == "cg" and result.status == "max_iter"


def test_lsvm_reports_unconverged_cg_solves(iterative):
    X, y = sparse_problem(100, 20, noise=0.15)
    signs = np.where(y == 1, 1.0, -1.0)
    assert lagrangian_svm(X, signs).status == "converged"
    with solver_limits(cg_max_iter=1):
        result = lagrangian_svm(X, signs)
        assert result.extra["factorization"] == "cg" and result.status == "max_iter"
        with pytest.warns(ConvergenceWarning):
            make_classifier("lsvm").fit(X, y)


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


def test_unchecked_candidate_is_not_a_proof(iterative, monkeypatch):
    X = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]))
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])  # (1, 1) in both classes
    Y = sign_normalized(X, y)
    assert ho_kashyap(Y).status == "not_separable"
    monkeypatch.setattr(InMemoryDesign, "_passes_check", lambda design, u: False)  # every check fails
    result = ho_kashyap(Y)
    assert result.status != "not_separable" and result.certificate is None


def test_proof_residual_of_a_signed_design():
    Y = sign_normalized(np.array([[1.0], [2.0], [3.0]]), np.array([1.0, -1.0, 1.0]))
    u = np.array([1.0, 2.0, 1.0])  # Σ u_i y_i (x_i, 1) = 0
    assert proof_residual(Y, u) == 0.0 and proof_residual(sp.csr_matrix(Y), u) == 0.0
    assert proof_residual(Y, np.ones(3)) > 0.1


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
    monkeypatch.setattr(_coo._coo_base, "toarray", guard(_coo._coo_base.toarray))


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


def duplicated_csr():
    """A CSR matrix whose cell (0, 0) is stored twice, 1e10 and 3 - 1e10 (value 3), with its dense twin."""
    data = np.array([1e10, 3.0 - 1e10, 2.0, 2.0])
    indices = np.array([0, 0, 1, 1])
    indptr = np.array([0, 3, 4])
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 2))
    assert not X.has_canonical_format
    return X, X.toarray()


def test_duplicate_entries_make_no_false_proof():
    from linsep._certificates import is_proof, proof_residuals

    X, dense = duplicated_csr()
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    y = np.array([1.0, -1.0])
    u = np.array([1.0, 1.0])  # Yᵀu = (3, 0, 0): not a proof (x_0 = 3 > 0 = x_1 separates)
    assert not is_proof(dense, y, u)
    assert not is_proof(X, y, u)
    np.testing.assert_allclose(proof_residuals(X, y, u), proof_residuals(dense, y, u))
    for got, want in zip((X.data, X.indices, X.indptr), before):  # the caller's matrix is untouched
        np.testing.assert_array_equal(got, want)


def test_duplicate_entries_in_kernel_columns_and_column_statistics():
    from linsep._design import _column_maxabs
    from linsep._linalg import _column_squares
    from linsep.kernels import KernelColumnCache

    X, dense = duplicated_csr()
    for kernel in ("linear", "rbf"):
        sparse_cache, dense_cache = KernelColumnCache(X, kernel=kernel), KernelColumnCache(dense, kernel=kernel)
        for j in range(2):
            np.testing.assert_allclose(sparse_cache.column(j), dense_cache.column(j), rtol=1e-12)
    np.testing.assert_array_equal(_column_maxabs(X), _column_maxabs(dense))
    np.testing.assert_allclose(_column_squares(X, None), _column_squares(dense, None))
    assert not X.has_canonical_format  # still the caller's own
