"""Kernel Ho–Kashyap on array-API input (:mod:`linsep.designs.array_api_kernel`): the kernel map and HK on the device.

Each check runs on array-api-strict's ``device1`` (which refuses
``np.asarray``) and on ``tests/device_arrays.py``, the stand-in for a CUDA
tensor (no ``__array_namespace__``, no implicit conversion, host copies and
scalar reads counted), in a fresh interpreter per kind of arrays (the
stand-in registers itself in ``sys.modules``; dispatch needs
``SCIPY_ARRAY_API=1``).  Before issue 41's kernel part every fit here was
refused (``KernelHoKashyapClassifier does not fit array-API arrays``).
"""

import pytest
import scipy

pytest.importorskip("array_api_strict")
from device_arrays import TORCH  # noqa: E402  (a helper at the top of tests/)
if tuple(int(part) for part in scipy.__version__.split(".")[:2]) < (1, 14):
    pytest.skip("scikit-learn's array-API dispatch needs SciPy >= 1.14", allow_module_level=True)

CHECKS = r"""
import json, os, warnings, numpy as np, sklearn
import device_arrays
kind = os.environ["LINSEP_TEST_ARRAYS"]
to_device, host = device_arrays.conversions(kind)
from linsep import KernelHoKashyapClassifier, make_classifier
from linsep.kernels import kernel_matrix
rng = np.random.default_rng(0)
X = rng.normal(size=(150, 3))
y = (X[:, 0] ** 2 + X[:, 1] + 0.3 * rng.normal(size=150) > 0.5).astype(np.int64)
y3 = np.digitize(X[:, 1], [-0.5, 0.5])
X_val = rng.normal(size=(60, 3))
y_val = (X_val[:, 0] ** 2 + X_val[:, 1] > 0.5).astype(np.int64)
ring = X[np.abs(np.linalg.norm(X[:, :2], axis=1) - 1.0) > 0.3]  # separable by a circle, with a margin
inside = (np.linalg.norm(ring[:, :2], axis=1) < 1.0).astype(np.int64)
gram = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
# RBF residuals all tie at one at the start: the device's kernel columns, whose k(x_i, x_i) differ from the
# NumPy fit's in the last bits, took another first pivot and fitted another model on these data (issue 41)
tie = np.random.default_rng(5).standard_normal((300, 10))
tie_labels = (tie[:, 0] + 0.5 * np.random.default_rng(6).standard_normal(300) > 0).astype(np.int64)
# float32 with a fixed budget: the stopping rule reads J rounded to float32 on the device
cases = [({}, X, y), ({"kernel": "poly", "degree": 2, "gamma": 0.5, "coef0": 1.0}, X, y),
         ({"kernel": "linear", "C": None, "map_tol": 0}, X, y), ({"kernel": "sigmoid", "gamma": 0.1}, X, y),
         ({}, X, y3), ({"map_tol": 0.0}, X, y), ({"loss": "absolute"}, X, y),
         ({"early_stopping": True, "random_state": 0}, X, y), ({"early_stopping": True, "random_state": 1}, X, y3),
         ({"kernel": "rbf", "gamma": 1.0, "C": None}, ring, inside),
         ({"kernel": "rbf", "gamma": 1.0, "C": None, "early_stopping": True, "random_state": 2}, ring, inside),
         ({"kernel": "precomputed"}, gram, y), ({}, tie, tie_labels),
         ({"kernel": "linear", "max_iter": 30}, X.astype(np.float32), y),
         ({"kernel": "poly", "degree": 2, "max_iter": 30}, X.astype(np.float32), y)]
def fitted(params, data, labels, **extra):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return KernelHoKashyapClassifier(**params).fit(data, labels, **extra)
reference = [fitted(*case) for case in cases]
given_reference = fitted({"early_stopping": True}, X, y, X_val=X_val, y_val=y_val)
sklearn.set_config(array_api_dispatch=True)
def compared(model, ref, data, labels, tested=None):
    tested = data if tested is None else tested
    Xd, yd, Xt = to_device(data), to_device(labels), to_device(tested)
    scores, predicted = model.decision_function(Xt), model.predict(Xt)
    ref_scores = ref.decision_function(tested)
    made = (model.dual_coef_, model.intercept_, model.X_fit_, model.support_, model.classes_, scores, predicted)
    scale = np.abs(ref.dual_coef_).max()
    return dict(
        namespaces=sorted({type(a).__module__.split(".")[0] for a in made}),
        devices=sorted({str(a.device) for a in made}), input_device=str(Xd.device),
        dtype=str(data.dtype), dual_dtype=str(host(model.dual_coef_).dtype),
        dual_error=float(np.max(np.abs(host(model.dual_coef_) - ref.dual_coef_)) / scale),
        intercept_error=float(np.max(np.abs(host(model.intercept_) - ref.intercept_)) / max(scale, 1)),
        score_error=float(np.max(np.abs(host(scores) - ref_scores)) / np.abs(ref_scores).max()),
        same_status=bool(np.all(np.atleast_1d(model.status_) == np.atleast_1d(ref.status_))),
        status=np.atleast_1d(ref.status_).tolist(),
        same_n_iter=bool(np.all(np.atleast_1d(model.n_iter_) == np.atleast_1d(ref.n_iter_))),
        same_best_iter=bool(np.all(np.atleast_1d(getattr(model, "best_iter_", -1))
                                   == np.atleast_1d(getattr(ref, "best_iter_", -1)))),
        same_rank=model.rank_ == ref.rank_, same_support=bool(np.array_equal(host(model.support_), ref.support_)),
        attributes=sorted(set(vars(ref)) ^ set(vars(model))),
        same_predictions=bool(np.all(host(predicted) == ref.predict(tested))),
        score=float(model.score(Xt, to_device(labels if tested is data else ref.predict(tested)))),
        reference_score=float(ref.score(tested, labels if tested is data else ref.predict(tested))))
def attempt(run):
    try:
        return run()
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
fits = []
for (params, data, labels), ref in zip(cases, reference):
    def run(params=params, data=data, labels=labels, ref=ref):
        model = fitted(params, to_device(data), to_device(labels))
        if params.get("kernel") == "precomputed":  # scored on kernel rows k(X_new, X) on the device
            return compared(model, ref, data, labels, tested=kernel_matrix(X_val, X, kernel="rbf", gamma=0.5))
        if data.shape[1] != X_val.shape[1]:  # the tie's own data: scored on its training rows
            return compared(model, ref, data, labels)
        return compared(model, ref, data, labels, tested=np.vstack([data, X_val.astype(data.dtype)]))
    fits.append(dict(params=repr(params), **attempt(run)))
def given():
    model = fitted({"early_stopping": True}, to_device(X), to_device(y), X_val=to_device(X_val), y_val=to_device(y_val))
    return compared(model, given_reference, X, y)
given_validation = attempt(given)
Xd, yd = to_device(X), to_device(y)
one_line = device_arrays.one_line
refused = {
    "callable": one_line(lambda: KernelHoKashyapClassifier(kernel=lambda a, b: a @ b.T).fit(Xd, yd)),
    "zero_weight_gram": one_line(lambda: KernelHoKashyapClassifier(kernel="precomputed").fit(
        to_device(gram), yd, sample_weight=np.r_[0.0, np.ones(149)])),
    "kernel_perceptron": one_line(lambda: make_classifier("kernel_perceptron").fit(Xd, yd)),
    "kernel_sk": one_line(lambda: make_classifier("kernel_sk").fit(Xd, yd)),
    "kernel_perceptron.partial_fit": one_line(
        lambda: make_classifier("kernel_perceptron").partial_fit(Xd, yd, classes=np.array([0, 1]))),
    "fitted_on_numpy": one_line(lambda: reference[0].decision_function(Xd)),
}
traffic = {}
big = rng.normal(size=(600, 3))  # N × r well above the 64 × 64 block of candidates
big_labels = (big[:, 0] ** 2 + big[:, 1] + 0.3 * rng.normal(size=600) > 0.5).astype(np.int64)
if kind == "stand-in":  # what crosses to the host during a fit (device_arrays.COUNTS)
    for name, params, data, labels in (("rbf", {}, big, big_labels), ("exact", {"map_tol": 0.0}, X, y),
                                       ("hkes", {"early_stopping": True, "random_state": 0}, big, big_labels)):
        Xt, yt = to_device(data), to_device(labels)
        device_arrays.reset_counts()
        model = attempt(lambda: fitted(params, Xt, yt))
        if isinstance(model, dict):
            traffic[name] = model
            continue
        traffic[name] = dict(device_arrays.COUNTS, n_iter=int(np.sum(model.n_iter_)), rank=model.rank_,
                             n=data.shape[0], blocks=-(-model.rank_ // 64) + 1)
        device_arrays.reset_counts()
        model.predict(Xt)
        traffic[name]["predict"] = dict(device_arrays.COUNTS)
print(json.dumps({"fits": fits, "given": given_validation, "refused": refused, "traffic": traffic}))
"""


@pytest.fixture(scope="module", params=("strict-device1", "stand-in", *TORCH))
def outcome(request):
    from device_arrays import run_checks  # a helper at the top of tests/

    return run_checks(CHECKS, request.param)


def _check_fit(fit, namespace):
    assert "error" not in fit, fit
    assert fit["namespaces"] == [namespace], fit
    assert fit["devices"] == [fit["input_device"]], fit  # the model, the scores and the labels where X lives
    # float64: the same map (the same pivots, chosen on the host by the NumPy code) and the same iteration:
    # rounding apart, the map's condition (the exact map of an RBF kernel: κ of the pivots' factor ≈ 1e5)
    # times eps; 1e-8.  float32: kernel values rounded to float32 (eps 6e-8) where the NumPy fit converts X to
    # float64 first: 1e-4 relative, the tolerance of issue 41.
    tol = 1e-4 if fit["dtype"] == "float32" else 1e-8
    assert fit["dual_error"] <= tol and fit["intercept_error"] <= tol and fit["score_error"] <= tol, fit
    assert fit["dual_dtype"] == fit["dtype"], fit  # float32 stays float32
    assert fit["same_status"] and fit["same_n_iter"] and fit["same_best_iter"], fit
    assert fit["same_rank"] and fit["same_support"] and not fit["attributes"], fit
    # the same predictions, so the same accuracy, averaged by scikit-learn in the namespace's default float type
    # (PyTorch's is float32: a relative rounding of 2**-24)
    assert fit["same_predictions"] and abs(fit["score"] - fit["reference_score"]) <= 2.0**-23, fit


def test_kernel_hk_fits_on_the_device_as_numpy_does(outcome):
    for fit in outcome["fits"]:
        _check_fit(fit, outcome["namespace"])
    statuses = [status for fit in outcome["fits"] for status in fit["status"]]
    assert "separable" in statuses and "converged" in statuses  # both verdict paths covered


def test_kernel_hkes_takes_validation_rows_on_the_device(outcome):
    _check_fit(outcome["given"], outcome["namespace"])


def test_what_the_device_fit_cannot_honour_is_refused_in_one_line(outcome):
    refused = outcome["refused"]
    for name, refusal in refused.items():
        assert refusal is not None, name
        assert "\n" not in refusal[1], (name, refusal)
    assert "callable kernel is not available for array-API input" in refused["callable"][1]
    assert "kernel='precomputed'" in refused["callable"][1]
    # weights and traces are taken on the device (test_array_api_traces.py); a precomputed Gram matrix takes no
    # zero weight, as in memory
    assert "kernel='precomputed' takes no zero sample weights" in refused["zero_weight_gram"][1]
    assert "fit it on these" in refused["fitted_on_numpy"][1]


def test_sequential_kernel_rules_name_kernel_hk_as_their_device_alternative(outcome):
    # before: the refusal named no alternative
    for name in ("kernel_perceptron", "kernel_sk", "kernel_perceptron.partial_fit"):
        kind, message = outcome["refused"][name]
        assert kind == "TypeError" and "does not fit array-API arrays where they live" in message, message
        assert "; KernelHoKashyapClassifier fits them on the device" in message, message


def test_the_kernel_matrix_and_the_iteration_stay_on_the_device(outcome):
    # per block of 64 pivot candidates two copies (the b × b block with its finite flag, the N squared norms of
    # the new factor rows), the variance for gamma, the eigenvalues, the diagonal once; per HK iteration one
    # copy of the pass's statistics (and the penalty's ‖w‖²); per problem the weights.  Never the N × N kernel
    # matrix nor the N × r map.
    if not outcome["traffic"]:
        pytest.skip("host traffic is counted on the stand-in only")
    for name, counts in outcome["traffic"].items():
        assert "error" not in counts, (name, counts)
        n = counts["n"]
        assert counts["largest_copy"] <= 8 * max(n, 64 * 64 + 1), (name, counts)
        assert counts["largest_copy"] < 8 * n * max(counts["rank"], 64 + 1), (name, counts)
        assert counts["host_copies"] <= 2 * counts["n_iter"] + 2 * counts["blocks"] + 20, (name, counts)
        assert counts["scalars"] <= counts["n_iter"] + 4, (name, counts)  # C's ‖w‖², once per iteration
        assert counts["predict"]["host_copies"] == 0 and counts["predict"]["scalars"] == 0, (name, counts)
