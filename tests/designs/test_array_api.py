"""Array-API input (``sklearn.set_config(array_api_dispatch=True)``): fits in the input's namespace.

scikit-learn's dispatch needs ``SCIPY_ARRAY_API=1`` before scipy is
imported, so the checks run in a fresh interpreter.
"""

import json
import os
import subprocess
import sys

import pytest
import scipy

pytest.importorskip("array_api_strict")
if tuple(int(part) for part in scipy.__version__.split(".")[:2]) < (1, 14):
    # scikit-learn refuses array_api_dispatch=True with an older SciPy (the array-api extra asks for 1.14)
    pytest.skip("scikit-learn's array-API dispatch needs SciPy >= 1.14", allow_module_level=True)

CHECKS = r"""
import json, numpy as np, sklearn, array_api_strict as xp
from linsep import make_classifier
rng = np.random.default_rng(0)
X = rng.normal(size=(120, 3))
y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(np.int64)
y3 = np.digitize(X[:, 1], [-0.5, 0.5])
# separable with a margin of 0.5: HK reaches the verdict in tens of iterations (points on the boundary
# took about 10 000, most of this check's time, for the same path)
wide = X[np.abs(X[:, 0] + X[:, 1]) > 0.5]
separable = (wide[:, 0] + wide[:, 1] > 0).astype(np.int64)
cases = [("hk", X, y), ("mhks", X, y), ("mhka", X, y), ("mse", X, y), ("modified_hk", X, y), ("mhks", X, y3),
         ("hk", wide, separable)]
reference = [make_classifier(name).fit(data, labels) for name, data, labels in cases]
sklearn.set_config(array_api_dispatch=True)
out = []
for (name, data, labels), ref in zip(cases, reference):
    fitted = make_classifier(name).fit(xp.asarray(data), xp.asarray(labels))
    scores, predicted = fitted.decision_function(xp.asarray(data)), fitted.predict(xp.asarray(data))
    host = lambda a: np.asarray(a._array, dtype=float)
    out.append(dict(
        name=name, n_classes=int(np.unique(labels).size),
        namespaces=sorted({type(a).__module__.split(".")[0] for a in (fitted.coef_, fitted.intercept_, scores, predicted)}),
        coef_error=float(np.max(np.abs(host(fitted.coef_) - ref.coef_)) / np.abs(ref.coef_).max()),
        intercept_error=float(np.max(np.abs(host(fitted.intercept_) - ref.intercept_)) / max(np.abs(ref.coef_).max(), 1)),
        same_status=bool(np.all(np.atleast_1d(fitted.status_) == np.atleast_1d(ref.status_))),
        same_n_iter=bool(np.all(np.atleast_1d(fitted.n_iter_) == np.atleast_1d(ref.n_iter_))),
        status=np.atleast_1d(ref.status_).tolist(),
        same_predictions=bool(np.all(np.asarray(predicted._array) == ref.predict(data)))))
refused = []
for make in (lambda: make_classifier("hkes"), lambda: make_classifier("hk", record_history=True)):
    try:
        make().fit(xp.asarray(X), xp.asarray(y))
    except ValueError as error:
        refused.append(str(error))
weights_refused = []
for make, weight in ((lambda: make_classifier("hk"), np.ones(120)), (lambda: make_classifier("mse", class_weight="balanced"), None)):
    try:
        make().fit(xp.asarray(X), xp.asarray(y), sample_weight=weight)
    except ValueError as error:
        weights_refused.append(str(error))
print(json.dumps({"fits": out, "refused": refused, "weights_refused": weights_refused}))
"""


@pytest.fixture(scope="module")
def outcome():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    run = subprocess.run([sys.executable, "-c", CHECKS], capture_output=True, text=True, env=env, timeout=300,
                         check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_hk_family_and_mse_equal_the_numpy_fits_and_stay_in_the_namespace(outcome):
    for fit in outcome["fits"]:
        assert fit["namespaces"] == ["array_api_strict"], fit
        assert fit["coef_error"] <= 1e-8 and fit["intercept_error"] <= 1e-8, fit
        assert fit["same_status"] and fit["same_n_iter"] and fit["same_predictions"], fit
    assert ["separable"] in [fit["status"] for fit in outcome["fits"]]  # the verdict path is covered


def test_what_array_api_input_cannot_honour_is_refused(outcome):
    assert len(outcome["refused"]) == 2
    assert all("is not available for array-API input" in message for message in outcome["refused"])


def test_weights_on_array_api_input_are_refused_not_ignored(outcome):
    # weighted fits run on NumPy/SciPy and dask arrays; array-API input refuses them (one line)
    assert len(outcome["weights_refused"]) == 2
    assert all("sample_weight or class_weight with array-API arrays" in m for m in outcome["weights_refused"])
