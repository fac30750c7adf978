"""Array-API input to ``HoKashyapClassifierCV`` (issue 41): the search over ``C`` and the folds on the device.

Each check compares a fit of device arrays with the NumPy fit of the same data: the folds (an int ``cv``'s
stratified folds, ``KFold``, ``ShuffleSplit`` whose folds do not partition the rows), a grid of ``C`` (one-vs-rest
too), the search's early end (``search_stopped_``), ``loss="absolute"``, ``refit=False``, ``n_jobs``, weights
(``sample_weight`` on the device with rows of weight 0, ``class_weight``), the refit's trace, and float32.
Before the device fit of the CV estimator every such fit was refused (``TypeError: HoKashyapClassifierCV does
not fit array-API arrays where they live``): every check of
``test_cv_device_fits_equal_the_numpy_fits`` failed.

As in ``test_array_api.py``, the checks run in a fresh interpreter per kind of arrays (``SCIPY_ARRAY_API=1``
before scipy is imported; the stand-in of ``tests/device_arrays.py`` registers itself): array-api-strict on its
non-CPU ``device1``, the stand-in for a CUDA tensor or a CuPy array (which counts its host copies) and, where
PyTorch is importable, real ``torch.Tensor`` s on the CPU (``device_arrays.TORCH``).
"""

import pytest
import scipy

pytest.importorskip("array_api_strict")
from device_arrays import TORCH  # noqa: E402  (a helper at the top of tests/)
if tuple(int(part) for part in scipy.__version__.split(".")[:2]) < (1, 14):
    pytest.skip("scikit-learn's array-API dispatch needs SciPy >= 1.14", allow_module_level=True)

ARRAYS = ("strict-device1", "stand-in", *TORCH)

CHECKS = r"""
import json, os, warnings, numpy as np, sklearn
from sklearn.model_selection import KFold, ShuffleSplit
import device_arrays
kind = os.environ["LINSEP_TEST_ARRAYS"]
to_device, host = device_arrays.conversions(kind)
from linsep import HoKashyapClassifierCV
rng = np.random.default_rng(0)
X = rng.normal(size=(150, 3))
y = (X[:, 0] + 0.5 * rng.normal(size=150) > 0).astype(np.int64)
y3 = np.digitize(X[:, 1], [-0.5, 0.5])
s = rng.uniform(0.2, 3.0, size=150)
s0 = s.copy()
s0[:7] = 0.0  # rows of weight 0 leave before the folds are drawn
# 40 rows, 13 weights: the grid's penalty wins (C_ = 21.5 here, not plain HK)
wide = rng.normal(size=(40, 12))
wide_labels = (wide[:, 0] + wide[:, 1] + rng.normal(size=40) > 0).astype(np.int64)
# 9 000 rows for 3 columns (2 400 per column in a fold's training rows): the search ends early (flat_search_end)
tall = rng.normal(size=(9000, 2))
tall_labels = (tall[:, 0] + 0.8 * rng.normal(size=9000) > 0).astype(np.int64)
# (parameters, X, y, sample_weight, class_weight)
cases = [({"random_state": 0}, X, y, None),
         ({"Cs": 5, "random_state": 0}, wide, wide_labels, None),
         ({"Cs": 7, "random_state": 0}, tall, tall_labels, None),
         ({"Cs": 3, "random_state": 2}, X, y3, None),
         ({"Cs": 3, "cv": KFold(4)}, X, y, None),
         ({"Cs": 3, "cv": ShuffleSplit(4, test_size=0.2, random_state=0)}, X, y, None),
         ({"Cs": [None, 1.0], "loss": "absolute", "random_state": 0}, X, y, None),
         ({"Cs": 3, "refit": False, "random_state": 0}, X, y, None),
         ({"Cs": 3, "n_jobs": 2, "random_state": 0}, X, y, None),
         ({"Cs": 3, "random_state": 0}, X, y, s0),
         ({"Cs": 3, "random_state": 0, "class_weight": "balanced"}, X, y3, s0),
         # weighted IRLS penalised: without C the reweighted systems of these nearly interpolated folds
         # (J ≈ 7e-5) agree to 1e-5 only, and one fold's run meets the relative stopping rule an iteration apart
         ({"Cs": [1.0, 10.0], "cv": KFold(3), "loss": "absolute", "class_weight": {0: 2.0, 1: 0.5}}, X, y, s),
         ({"random_state": 0, "record_history": True}, X, y, None),
         # float32: a fixed budget per run (a stopping rule reading J rounded to float32 may stop a step apart)
         ({"Cs": 3, "random_state": 0, "max_iter": 30, "n_iter_no_change": None}, X.astype(np.float32), y, None)]
def listed(value):
    return value if isinstance(value, list) else [value]
def fitted(data, labels, w, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the ConvergenceWarning of the float32 budget, on both sides
        return HoKashyapClassifierCV(**params).fit(data, labels, sample_weight=w)
reference = [fitted(data, labels, w, params) for params, data, labels, w in cases]
sklearn.set_config(array_api_dispatch=True)
fits = []
for (params, data, labels, w), ref in zip(cases, reference):
    try:
        Xd, yd = to_device(data), to_device(labels)
        if kind == "stand-in":
            device_arrays.reset_counts()
        clf = fitted(Xd, yd, None if w is None else to_device(w), params)
        counts = dict(device_arrays.COUNTS) if kind == "stand-in" else {}
        scores, predicted = clf.decision_function(Xd), clf.predict(Xd)
        made = (clf.coef_, clf.intercept_, scores, predicted)
        scale = np.abs(ref.coef_).max()
        surfaces = list(zip(listed(clf.cv_results_), listed(ref.cv_results_)))
        stops = list(zip(listed(clf.search_stopped_), listed(ref.search_stopped_)))
        runs = sum(int(np.count_nonzero(r["fold_n_iter"])) for r in listed(ref.cv_results_))
        iterations = sum(int(np.sum(r["fold_n_iter"])) for r in listed(ref.cv_results_))
        fit = dict(
            namespaces=sorted({type(a).__module__.split(".")[0] for a in made}),
            devices=sorted({str(a.device) for a in made}), input_device=str(Xd.device),
            coef_dtype=str(host(clf.coef_).dtype),
            coef_error=float(np.max(np.abs(host(clf.coef_) - ref.coef_)) / scale),
            intercept_error=float(np.max(np.abs(host(clf.intercept_) - ref.intercept_)) / max(scale, 1)),
            same_C=clf.C_ == ref.C_, C=ref.C_,
            same_best_iter=bool(np.all(np.atleast_1d(clf.best_iter_) == np.atleast_1d(ref.best_iter_))),
            same_n_iter=bool(np.all(np.atleast_1d(clf.n_iter_) == np.atleast_1d(ref.n_iter_))),
            same_status=bool(np.all(np.atleast_1d(clf.status_) == np.atleast_1d(ref.status_))),
            status=np.atleast_1d(ref.status_).tolist(),
            same_fold_n_iter=all(np.array_equal(a["fold_n_iter"], b["fold_n_iter"]) for a, b in surfaces),
            same_best_iters=all(np.array_equal(a["best_iter"], b["best_iter"]) for a, b in surfaces),
            surface_error=max(float(np.nanmax(np.abs(a[key] - b[key]))) for a, b in surfaces
                              for key in ("mean_validation_error", "best_validation_error")),
            same_nan=all(np.array_equal(np.isnan(a["best_validation_error"]), np.isnan(b["best_validation_error"]))
                         for a, b in surfaces),
            curve_error=max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                            for a, b in zip(listed(clf.cv_curves_), listed(ref.cv_curves_))),
            stopped=[None if b is None else b["after_C"] for a, b in stops],
            same_stop=all((a is None) == (b is None) and (a is None or (a["after_C"] == b["after_C"]
                                                                      and a["not_run"] == b["not_run"]))
                          for a, b in stops),
            history_error=max([float(np.max(np.abs(np.asarray(h[key], float) - np.asarray(r[key], float))
                                            / np.maximum(1.0, np.abs(np.asarray(r[key], float)))))
                               for h, r in zip(listed(getattr(clf, "history_", None)),
                                               listed(getattr(ref, "history_", None))) if r is not None
                               for key in r if np.asarray(r[key]).size] or [0.0]),
            history_on_host=all(isinstance(v, np.ndarray) for h in listed(getattr(clf, "history_", None))
                                if h is not None for v in h.values()),
            score=float(clf.score(Xd, yd)), reference_score=float(ref.score(data, labels)),
            same_predictions=bool(np.all(host(predicted) == ref.predict(data))),
            counts=counts, runs=runs, iterations=iterations + int(np.sum(np.atleast_1d(ref.n_iter_))),
            X_bytes=data.nbytes, labels_bytes=labels.nbytes, traced=bool(params.get("record_history")))
    except Exception as error:
        fit = {"error": f"{type(error).__name__}: {error}"}
    fits.append(dict(params=repr(params), dtype=str(data.dtype), **fit))

one_line = device_arrays.one_line
Xd, yd = to_device(X), to_device(y)
refused = {
    "pos_label": one_line(lambda: HoKashyapClassifierCV(pos_label=0).fit(Xd, yd)),
    "shape": one_line(lambda: HoKashyapClassifierCV().fit(Xd, yd, sample_weight=to_device(s[:50]))),
}

# what a CV fit allocates beside X
extra_memory = device_arrays.extra_memory(
    [("hkes_cv", lambda X, y: HoKashyapClassifierCV(Cs=2, max_iter=3, random_state=0).fit(X, y))], to_device, rng)
print(json.dumps({"fits": fits, "refused": refused, "memory": extra_memory}))
"""


@pytest.fixture(scope="module", params=ARRAYS)
def outcome(request):
    from device_arrays import run_checks  # a helper at the top of tests/

    return run_checks(CHECKS, request.param, timeout=600)


def test_cv_device_fits_equal_the_numpy_fits(outcome):
    # Fails before the CV estimator's device fit: every fit was refused with a TypeError.
    for fit in outcome["fits"]:
        assert "error" not in fit, fit
        assert fit["namespaces"] == [outcome["namespace"]], fit
        assert fit["devices"] == [fit["input_device"]], fit  # coef_, scores and labels where X lives
        # the folds, the grid, the early exits and the search's end are the NumPy fit's: the same C_, k̂ per
        # C and fold iterations, the validation curves equal (error counts over the same rows)
        assert fit["same_C"] and fit["same_best_iter"] and fit["same_best_iters"], fit
        assert fit["same_fold_n_iter"] and fit["same_stop"] and fit["same_nan"], fit
        # mean error fractions of the same counts: equal up to the rounding of their average (F terms)
        assert fit["surface_error"] <= 1e-12 and fit["curve_error"] <= 1e-12, fit
        # float64: the same iteration from the Gram matrix (κ(YᵀY)·eps ≈ 1e-14 on these data; a fold's Gram matrix
        # as all rows' less the validation rows' loses eps·‖G‖ more), 1e-8; float32: the products rounded to
        # float32 (eps 6e-8, 4 terms a row) where NumPy's fit forms Y in float64, 1e-4 (issue 41's tolerance)
        tol = 1e-4 if fit["dtype"] == "float32" else 1e-8
        assert fit["coef_error"] <= tol and fit["intercept_error"] <= tol, fit
        assert fit["coef_dtype"] == fit["dtype"], fit  # float32 stays float32
        assert fit["same_status"] and fit["same_n_iter"] and fit["same_predictions"], fit
        # the same predictions, so the same accuracy, averaged by scikit-learn in the namespace's default float
        # type: PyTorch's is float32 (a relative rounding of 2**-24), NumPy's and array-api-strict's float64
        assert abs(fit["score"] - fit["reference_score"]) <= 2.0**-23, fit
        # the refit's trace: copied to the host once, equal to the NumPy trace (relative to max(1, |value|))
        assert fit["history_error"] <= 1e-8 and fit["history_on_host"], fit
    Cs = [fit["C"] for fit in outcome["fits"]]
    assert any(C is not None for C in Cs)  # the grid's penalty chosen somewhere, not only plain HK
    assert any(stop is not None for fit in outcome["fits"] for stop in fit["stopped"])  # the search's early end
    assert any("not_separable" in fit["status"] for fit in outcome["fits"])  # a fold's proof, on every row


def test_the_search_copies_no_rows_of_x_to_the_host(outcome):
    # The stand-in counts its host copies: the labels once (the folds are drawn on the host), then per iteration
    # of a run the pass's statistics and the validation count (two copies), p weights per run.  Nothing of the
    # size of X; the largest copy is the labels' (or, on a not_separable verdict, the problem's rows for the
    # exact check of the certificate, as every device fit does).  A traced fit's trace is its own documented copy
    # (every recorded row at once, N-vectors among them).
    stand_in = [fit for fit in outcome["fits"] if fit["counts"] and not fit["traced"]]
    if not stand_in:
        pytest.skip("host traffic is counted on the stand-in only")
    for fit in stand_in:
        counts = fit["counts"]
        if "not_separable" not in fit["status"]:
            assert counts["largest_copy"] <= max(fit["labels_bytes"], 8 * 64), fit
        assert counts["largest_copy"] < fit["X_bytes"] or "not_separable" in fit["status"], fit
        # two copies an iteration (statistics, validation count), a few per run (the factor's checks, the weights,
        # the final count), a few per fit (labels, classes, the columns' range, the folds' λ⁺)
        assert counts["host_copies"] <= 2 * fit["iterations"] + 6 * fit["runs"] + 30, fit
        # one scalar an iteration at most (‖w‖² of a penalised criterion)
        assert counts["scalars"] <= fit["iterations"] + 2 * fit["runs"] + 10, fit


def test_what_the_device_cv_fit_cannot_honour_is_refused(outcome):
    refused = outcome["refused"]
    kind, message = refused["pos_label"]
    assert kind == "ValueError" and "pos_label=0 is not available for array_api input" in message, message
    # (the kernel twin fits on the device too: test_array_api_kernel_cv.py)
    kind, message = refused["shape"]
    assert kind == "ValueError" and "sample_weight" in message
    assert all("\n" not in refusal[1] for refusal in refused.values())


def test_a_cv_fit_copies_no_x_beside_it(outcome):
    # The runs read the folds' rows of X in place (no fold's copy of X: 0.8 X each); what a fit allocates beside
    # X is O(N) vectors (a run's B, E, scores, indices) and the validation rows summed an eighth at a time.
    assert "error" not in outcome["memory"], outcome["memory"]
    # At d = 64 an N-vector is 1/64 of float64 X (1/32 of float32 X, against int64 indices): the dozen or so
    # vectors come to 0.41 X in float64 and 0.54 X in float32 here; one fold's copy of X would add 0.8 X.
    for dtype, ratio in outcome["memory"].items():
        assert ratio <= 0.75, (dtype, ratio)
