"""Inexact W-steps that break Ho–Kashyap's descent are made exact (the run goes on instead of overflowing).

On a 3 000-document text problem, one fold of ``hkes_cv_c`` (C = None, 2 400 rows, 5 756 columns) fed the
inexact solves' error back into the margins, which grew by about 4 a step until ``FloatingPointError``
("Ho–Kashyap diverged at iteration 95") ended the whole search.
"""

import numpy as np
import pytest
import scipy.sparse.linalg
from sklearn.feature_extraction.text import TfidfVectorizer

from linsep import make_classifier
from linsep.datasets import make_topic_corpus


def test_hkes_cv_on_wide_text_fits_where_the_inexact_solves_diverged():
    docs, topics = make_topic_corpus(4000, 2, random_state=0)  # the first 3 000 (the benchmark's training rows)
    docs, topics = docs[:3000], topics[:3000]
    X = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(docs)
    model = make_classifier("hkes_cv_c", random_state=0).fit(X, topics)
    assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_).all()
    assert model.score(X, topics) > 0.9


def test_no_tight_re_solve_while_the_weights_separate():
    # Wide text rows that early stopping keeps interpolated: E ≈ 0, so every iteration looked like a proof
    # candidate and was re-solved to 1e-14, though Y W > 0 rules a proof out.  One CG solve per W-step now:
    # the first, the n_iter − 1 iterations' and the polish (with validation rows the solves stay in the row
    # space of Y: no minimum-norm map).
    from linsep._core.linalg import CG_FORCING, solver_limits
    from linsep._core.signed_design import sign_normalized
    from linsep.solvers.ho_kashyap import ho_kashyap

    docs, topics = make_topic_corpus(400, 2, random_state=0)
    X = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(docs)  # 400 × 1 580
    Y = sign_normalized(X, 2.0 * topics - 1)
    with solver_limits(direct_max_columns=2):
        result = ho_kashyap(Y[:300], Y_val=Y[300:], b0=1e-6, stop_at_separation=False, n_iter_no_change=30,
                            plan={"cg_forcing": CG_FORCING})
    assert result.status in ("separable", "converged")
    assert result.extra["cg_solves"] == result.n_iter + 1
    assert result.extra["minimum_norm_map"] is None


@pytest.mark.numerics
def test_the_pass_after_an_inexact_margin_step_takes_the_fitted_values_cg_tracked():
    # The solver keeps Y W up to date from CG's own products Y d (IterativeLeastSquares.track_fitted, on for
    # Ho–Kashyap's inexact W-steps); the pass after each step takes it instead of a product of its own with Y.
    # Unchecked, it drifted: with the recycled correction's eigenvalue cut at 1e-12 (RECYCLED_RCOND) to 5e-5
    # of max |Y W|; at 1e-8, to 3e-8 by step 21 and 1e-3 by step 35 under OpenBLAS's Haswell and Zen kernels
    # (the correction's coefficients multiply the rounding of the kept steps' Y s_j: FITTED_RTOL).  The solver
    # now checks the tracked values after every solve and forms the product where they are off.
    from linsep._core.linalg import _EPS, CG_FORCING, FITTED_RTOL, IterativeLeastSquares
    from linsep._core.signed_design import sign_normalized
    from linsep.designs import as_design
    from linsep.solvers.ho_kashyap.step import hk_iterates, hk_pass

    docs, topics = make_topic_corpus(400, 2, random_state=0)
    X = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(docs)
    design = as_design(sign_normalized(X, 2.0 * topics - 1)[:300])
    factor = IterativeLeastSquares(design.Y, ridge=1.0, forcing=CG_FORCING, track_fitted=True)
    options = dict(offset=0.0, two_mu=1.8, tol=1e-6, update="margin", irls=False)
    B = design.constant_vector(1.0)
    W = design.solve_target(factor, B, 0.0)
    state = hk_pass(design, W, B, None, **options)
    steps = hk_iterates(design, state, W, B, None, factor, update="margin", learning_rate=0.9, irls_floor=None,
                        pass_options=options)
    Y = design.Y
    # The reference Y @ W is rounded too: |fl(Y W) − Y W| <= k eps |Y| |W| row by row (k stored entries a row at
    # most), and ‖|Y| |W|‖₂ <= ‖Y‖_F ‖W‖₂.
    reference_rounding = Y.getnnz(axis=1).max() * _EPS * scipy.sparse.linalg.norm(Y)
    for _ in range(45):
        W, B, _, factor, state = next(steps)
        tracked = factor.fitted_values(W)
        assert tracked is not None and np.array_equal(state.Z, tracked)
        exact = Y @ W
        # The solver's bound, ‖Z − Y W‖₂ <= FITTED_RTOL ‖Z‖₂ (linsep._core.linalg._FittedCheck: missed with
        # probability 1.6e-6 per solve; its vectors come from a fixed seed, so this run is deterministic), plus
        # the reference's rounding.  Measured worst over Haswell, Zen, SkylakeX, Sandybridge and Prescott, on 1
        # and 2 BLAS threads: 4.6e-11 ‖Y W‖₂ (1.0e-10 of max |Y W|).
        bound = FITTED_RTOL * np.linalg.norm(state.Z) + reference_rounding * np.linalg.norm(W)
        assert np.linalg.norm(state.Z - exact) <= bound


def test_a_run_without_polish_keeps_the_curve_and_skips_the_full_re_solve():
    # plan["polish"] = False (HoKashyapClassifierCV's folds when it refits): the same iterates and validation
    # curve, the kept iterate returned as the inexact W-steps left it, one CG solve less.
    from linsep._core.linalg import CG_FORCING, solver_limits
    from linsep._core.signed_design import sign_normalized
    from linsep.solvers.ho_kashyap import ho_kashyap

    docs, topics = make_topic_corpus(400, 2, random_state=0)
    X = TfidfVectorizer(min_df=2, sublinear_tf=True, max_features=150).fit_transform(docs)
    labels = 2.0 * topics - 1
    labels[::7] *= -1  # not separable: k̂ = 10 of 15 iterations, an inexact iterate kept
    Y = sign_normalized(X, labels)
    runs = {}
    with solver_limits(direct_max_columns=2):
        for polish in (True, False):
            runs[polish] = ho_kashyap(Y[:300], Y_val=Y[300:], C=0.1, stop_at_separation=False, n_iter_no_change=5,
                                      plan={"cg_forcing": CG_FORCING, "polish": polish})
    polished, raw = runs[True], runs[False]
    np.testing.assert_array_equal(raw.history["validation_error"], polished.history["validation_error"])
    assert (raw.n_iter, raw.best_iter, raw.status) == (polished.n_iter, polished.best_iter, polished.status)
    assert raw.best_iter > 1 and raw.status == "converged"
    assert raw.extra["cg_solves"] == polished.extra["cg_solves"] - 1
    assert not np.array_equal(raw.weights, polished.weights)
    np.testing.assert_allclose(raw.weights, polished.weights, rtol=0, atol=1e-2 * np.abs(polished.weights).max())
