"""The kernel LSVM on array-API input (:mod:`linsep.designs.array_api_kernel_lsvm`): K, its factors and (22) on the device.

As in ``test_array_api_kernel.py``: each check runs in a fresh interpreter
per kind of arrays, on array-api-strict's ``device1``, on
``tests/device_arrays.py`` (the stand-in for a CUDA tensor: no
``__array_namespace__``, no implicit conversion, host copies and scalar
reads counted) and on PyTorch CPU tensors where torch is importable.  Before
issue 41's kernel LSVM part every fit here was refused
(``KernelLagrangianSVMClassifier does not fit array-API arrays``).  The
``N × N`` path runs on ``N = 150`` (array-api-strict solves a triangular
system as a general one: ``N³`` a solve); the active sets of many samples
on ``N = 2000``.
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
from linsep import KernelLagrangianSVMClassifier
from linsep.kernels import kernel_matrix, low_rank_gram_factor
rng = np.random.default_rng(0)
X = rng.normal(size=(150, 3))
y = (X[:, 0] ** 2 + X[:, 1] + 0.3 * rng.normal(size=150) > 0.5).astype(np.int64)
y3 = np.digitize(X[:, 1], [-0.5, 0.5])
plane = rng.normal(size=(320, 2))  # N/4 = 80 columns allowed: K of a cubic kernel in the plane has 10
plane_labels = (plane[:, 0] ** 2 + plane[:, 1] > 0.5).astype(np.int64)
low_rank = {"kernel": "poly", "degree": 3, "coef0": 1.0, "gamma": 0.5}
X_new = rng.normal(size=(40, 3))
gram = kernel_matrix(X, X, kernel="rbf", gamma=0.5)
weights = rng.uniform(0.2, 3.0, size=150)
weights[:5] = 0.0  # rows of weight 0 leave the fit
many = rng.normal(size=(2000, 5))  # from ACTIVE_SET_MIN_SAMPLES: no small factor of K in 5 dimensions
many_labels = (many[:, 0] ** 2 + many[:, 1] + 0.3 * rng.normal(size=2000) > 0.5).astype(np.int64)
# (params, X, y, sample_weight, forced path, the path both fits take)
cases = [({}, X, y, None, None, "gram"), ({}, X, y3, None, None, "gram"),
         ({"kernel": "poly", "degree": 2, "coef0": 1.0}, X, y, None, None, "gram"),
         ({"kernel": "linear", "C": 10.0}, X, y, None, None, "gram"),
         ({"kernel": "sigmoid", "gamma": 0.05}, X, y, None, None, "gram"),
         ({"kernel": "precomputed"}, gram, y, None, None, "gram"),
         (low_rank, plane, plane_labels, None, None, "low_rank"),
         (low_rank, plane, np.digitize(plane[:, 1], [0.0, 0.8]), None, None, "low_rank"),
         ({}, X, y, weights, None, "gram"), ({"class_weight": "balanced"}, X, y3, None, None, "gram"),
         (low_rank, plane, plane_labels, rng.uniform(0.5, 2.0, size=320), None, "low_rank"),
         ({}, X.astype(np.float32), y, None, None, "gram"),
         (low_rank, plane.astype(np.float32), plane_labels, None, None, "low_rank"),
         ({"C": 4.0}, X, y, None, "active_set", "active_set"), ({"C": 4.0}, X, y3, None, "active_set", "active_set"),
         ({"kernel": "precomputed", "C": 4.0}, gram, y, None, "active_set", "active_set"),
         ({"C": 4.0, "max_iter": 2}, X, y, None, "active_set", "gram"),  # two rounds fail: the iteration, as in memory
         ({}, many, many_labels, None, None, "active_set"),  # the probe finds no small factor: active sets
         ({}, many.astype(np.float32), many_labels, None, None, "active_set")]
def fitted(params, data, labels, sample_weight, path, expected=None):
    model = KernelLagrangianSVMClassifier(**params)
    model._solver_plan = None if path is None else {"path": path}  # private: the path forced
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(data, labels, sample_weight=sample_weight)
reference = [fitted(*case) for case in cases]
# the NumPy fit's path: a low-rank factor where low_rank_gram_factor finds one, active sets by their n_iter_
# (solves, at most 50) where they ran
numpy_paths = [("low_rank" if params.get("kernel") != "precomputed" and low_rank_gram_factor(
    data.astype(float), kernel=ref.kernel, **ref._kernel_params()) is not None else "gram")
    if path is None and data.shape[0] < 2000 else path or "active_set"
    for (params, data, labels, _, path, _), ref in zip(cases, reference)]
sklearn.set_config(array_api_dispatch=True)
def compared(model, ref, data, labels, tested):
    Xd, Xt = to_device(data), to_device(tested)
    scores, predicted = model.decision_function(Xt), model.predict(Xt)
    ref_scores = ref.decision_function(tested)
    made = (model.dual_coef_, model.intercept_, model.alpha_, model.X_fit_, model.classes_, scores, predicted)
    scale = np.abs(ref.dual_coef_).max()
    return dict(
        namespaces=sorted({type(a).__module__.split(".")[0] for a in made}),
        devices=sorted({str(a.device) for a in made}), input_device=str(Xd.device),
        dtype=str(data.dtype), dtypes=sorted({str(host(a).dtype) for a in made[:4]}),
        dual_error=float(np.max(np.abs(host(model.dual_coef_) - ref.dual_coef_)) / scale),
        alpha_error=float(np.max(np.abs(host(model.alpha_) - ref.alpha_)) / np.abs(ref.alpha_).max()),
        intercept_error=float(np.max(np.abs(host(model.intercept_) - ref.intercept_)) / max(scale, 1)),
        score_error=float(np.max(np.abs(host(scores) - ref_scores)) / np.abs(ref_scores).max()),
        same_status=bool(np.all(np.atleast_1d(model.status_) == np.atleast_1d(ref.status_))),
        same_n_iter=bool(np.all(np.atleast_1d(model.n_iter_) == np.atleast_1d(ref.n_iter_))),
        path=model._fit_plans[0]["path"], n_fit=int(model.X_fit_.shape[0]), ref_n_fit=int(ref.X_fit_.shape[0]),
        attributes=sorted(set(vars(ref)) ^ set(vars(model))),
        same_predictions=bool(np.all(host(predicted) == ref.predict(tested))))
def attempt(run):
    try:
        return run()
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
fits = []
for (params, data, labels, sample_weight, path, expected), ref, numpy_path in zip(cases, reference, numpy_paths):
    def run(params=params, data=data, labels=labels, sample_weight=sample_weight, path=path, ref=ref):
        model = fitted(params, to_device(data), to_device(labels),
                       None if sample_weight is None else to_device(sample_weight), path)
        tested = kernel_matrix(X_new, X, kernel="rbf", gamma=0.5) if params.get("kernel") == "precomputed" \
            else np.vstack([data[:400], rng.normal(size=(40, data.shape[1])).astype(data.dtype)])
        return compared(model, ref, data, labels, tested)
    fits.append(dict(params=repr(params), numpy_path=numpy_path, expected=expected, forced=path,
                     weighted=sample_weight is not None, ref_n_iter=np.atleast_1d(ref.n_iter_).tolist(),
                     **attempt(run)))
Xd, yd = to_device(X), to_device(y)
def one_line(run):
    try:
        run()
    except Exception as error:
        return [type(error).__name__, str(error)]
    return None
refused = {
    "record_history": one_line(lambda: KernelLagrangianSVMClassifier(record_history=True).fit(Xd, yd)),
    "callable": one_line(lambda: KernelLagrangianSVMClassifier(kernel=lambda a, b: a @ b.T).fit(Xd, yd)),
    "precomputed_zero_weight": one_line(lambda: KernelLagrangianSVMClassifier(kernel="precomputed").fit(
        to_device(gram), yd, sample_weight=weights)),
    "pos_label": one_line(lambda: KernelLagrangianSVMClassifier(pos_label=1).fit(Xd, yd)),
}
traffic = {}
if kind == "stand-in":  # what crosses to the host during a fit (device_arrays.COUNTS)
    for name, params, data, labels in (("gram", {}, X, y), ("low_rank", low_rank, plane, plane_labels),
                                       ("three classes", {}, X, y3), ("active_set", {}, many, many_labels)):
        Xt, yt = to_device(data), to_device(labels)
        device_arrays.reset_counts()
        model = attempt(lambda: fitted(params, Xt, yt, None, None))
        if isinstance(model, dict):
            traffic[name] = model
            continue
        traffic[name] = dict(device_arrays.COUNTS, n_iter=int(np.sum(model.n_iter_)), n=data.shape[0],
                             problems=int(np.size(model.n_iter_)), path=model._fit_plans[0]["path"])
        device_arrays.reset_counts()
        model.predict(Xt)
        traffic[name]["predict"] = dict(device_arrays.COUNTS)
print(json.dumps({"fits": fits, "refused": refused, "traffic": traffic}))
"""


@pytest.fixture(scope="module", params=("strict-device1", "stand-in", *TORCH))
def outcome(request):
    from device_arrays import run_checks  # a helper at the top of tests/

    return run_checks(CHECKS, request.param, timeout=600)


def test_kernel_lsvm_fits_on_the_device_as_numpy_does(outcome):
    # before issue 41's kernel LSVM part: TypeError "KernelLagrangianSVMClassifier does not fit array-API arrays"
    for fit in outcome["fits"]:
        assert "error" not in fit, fit
        assert fit["namespaces"] == [outcome["namespace"]], fit
        assert fit["devices"] == [fit["input_device"]], fit  # the model, alpha_, the scores and labels where X lives
        assert fit["dtypes"] == [fit["dtype"]], fit  # float32 stays float32 (dual_coef_, intercept_, alpha_, X_fit_)
        assert fit["n_fit"] == fit["ref_n_fit"] and not fit["attributes"], fit  # rows of weight 0 left out too
        assert fit["same_status"] and fit["same_predictions"], fit
        # the NumPy fit's path, chosen by its rules (or forced alike), and its steps: the same iteration and
        # stopping decisions, or the same active sets round by round
        assert fit["path"] == fit["expected"], fit
        assert fit["numpy_path"] == fit["expected"] or fit["expected"] == "gram" and fit["forced"], fit
        assert fit["same_n_iter"], fit
        # float64: the same kernel values (rounding apart), the same factor (the low-rank one on the same pivots,
        # Q's, or Q_AA's of the same active set) and the same iteration, a contraction: rounding times κ(Q)
        # (≤ C·λmax(K + 11ᵀ) ≈ 1e4 here) times eps: 1e-8.  float32: the kernel values rounded to float32
        # (eps 6e-8) where the NumPy fit computes them in float64, times κ(Q): 1e-4 relative, issue 41's tolerance
        tol = 1e-4 if fit["dtype"] == "float32" else 1e-8
        assert fit["dual_error"] <= tol and fit["alpha_error"] <= tol and fit["intercept_error"] <= tol, fit
        assert fit["score_error"] <= tol, fit
    paths = {fit["path"] for fit in outcome["fits"]}
    assert paths == {"gram", "low_rank", "active_set"}  # every path of the device fit covered


def test_what_the_device_fit_cannot_honour_is_refused_in_one_line(outcome):
    refused = outcome["refused"]
    for name, refusal in refused.items():
        assert refusal is not None, name
        assert "\n" not in refusal[1], (name, refusal)
    assert "record_history=True is not available for array-API input" in refused["record_history"][1]
    assert "callable kernel is not available for array-API input" in refused["callable"][1]
    assert "kernel='precomputed' takes no zero sample weights" in refused["precomputed_zero_weight"][1]
    assert "fit in memory" in refused["pos_label"][1]


def test_the_kernel_matrix_and_the_iteration_stay_on_the_device(outcome):
    # per iteration of (22) one copy of the stopping rule's five numbers; per active-set round two (its numbers,
    # whether the set changed); per block of 64 pivot candidates of the low-rank factor two copies (the b × b
    # block with a finite flag, the N squared norms of the new rows: the probe's too); the classes, gamma's
    # variance, the factor's checks; the intercepts once.  Never the N × N kernel matrix, Q or its factor, nor
    # α (N numbers: only the low-rank factor's N squared norms are that long).
    if not outcome["traffic"]:
        pytest.skip("host traffic is counted on the stand-in only")
    for name, counts in outcome["traffic"].items():
        assert "error" not in counts, (name, counts)
        n = counts["n"]
        assert counts["largest_copy"] <= 8 * max(n, 64 * 64 + 1) < 8 * n * n, (name, counts)
        blocks = 2 * (1000 // 64 + 2) if counts["path"] == "active_set" else 0  # the probe's blocks (of 1 000 rows)
        assert counts["host_copies"] <= 2 * counts["n_iter"] + 3 * counts["problems"] + blocks + 12, (name, counts)
        assert counts["scalars"] <= 4, (name, counts)  # no per-iteration scalar reads: one copy of five numbers
        assert counts["predict"]["host_copies"] == 0 and counts["predict"]["scalars"] == 0, (name, counts)
    assert {counts["path"] for counts in outcome["traffic"].values()} == {"gram", "low_rank", "active_set"}
