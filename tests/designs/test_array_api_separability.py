"""``check_separability`` on array-API input (:mod:`linsep.designs.array_api_separability`): decided on the device.

Each check runs on array-api-strict's ``device1`` and on ``tests/device_arrays.py`` (the stand-in for a CUDA
tensor: no ``__array_namespace__``, no implicit conversion, host copies counted), in a fresh interpreter per
kind of arrays.  Before, ``check_separability`` refused array-API input (``does not fit array-API arrays where
they live``): every test here failed.
"""

import pytest
import scipy

pytest.importorskip("array_api_strict")
from device_arrays import TORCH  # noqa: E402  (a helper at the top of tests/)
if tuple(int(part) for part in scipy.__version__.split(".")[:2]) < (1, 14):
    pytest.skip("scikit-learn's array-API dispatch needs SciPy >= 1.14", allow_module_level=True)

ARRAYS = ("strict-device1", "stand-in", *TORCH)  # PyTorch CPU tensors too, where torch is importable

CHECKS = r"""
import json, os, numpy as np, sklearn
import device_arrays
kind = os.environ["LINSEP_TEST_ARRAYS"]
to_device, host = device_arrays.conversions(kind)
from linsep import check_separability
from linsep._core.plan import forced_plan
from linsep.solvers.ho_kashyap.solver import ho_kashyap
rng = np.random.default_rng(0)
X = rng.normal(size=(80, 3))
y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)            # separable: HK's hyperplane
y_noisy = (X[:, 0] + rng.normal(size=80) > 0).astype(np.int64)  # not separable: the linear programs decide
xor = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
xor_labels = np.array([0, 0, 1, 1])                           # not separable: HK's proof
y3 = np.digitize(X[:, 0], [-0.5, 0.5])                        # three classes, one of them not separable
cases = [("separable", X, y, {}), ("separable32", X.astype(np.float32), y, {}),
         ("noisy", X, y_noisy, {}), ("xor", xor, xor_labels, {}),
         ("three", X, y3, {"pairwise": True}), ("three32", X.astype(np.float32), y3, {"pairwise": True})]

def described(result):
    verdicts = [("", result)] if hasattr(result, "certificate") else result.verdicts()
    out = []
    for name, verdict in verdicts:
        c = verdict.certificate
        row = dict(name=name, status=verdict.status, method=verdict.method, n_iter=int(verdict.n_iter),
                   classes=[str(v) for v in verdict.classes])
        if c is not None and hasattr(c, "margin"):
            row.update(kind="plane", margin=c.margin, coef=c.coef.tolist(), intercept=c.intercept,
                       host=type(c.coef).__module__ == "numpy")
        elif c is not None:
            row.update(kind="proof", support=c.support.tolist(), u=c.u.tolist(), residual=c.residual,
                       host=type(c.u).__module__ == "numpy")
        out.append(row)
    return out

reference = {name: described(check_separability(data, labels, **options)) for name, data, labels, options in cases}
sklearn.set_config(array_api_dispatch=True)
fits, traffic = {}, {}
for name, data, labels, options in cases:
    Xd, yd = to_device(data), to_device(labels)
    device_arrays.reset_counts()
    try:
        fits[name] = described(check_separability(Xd, yd, **options))
    except Exception as error:
        fits[name] = {"error": f"{type(error).__name__}: {error}"}
    traffic[name] = dict(device_arrays.COUNTS, rows_bytes=int(data.nbytes))

seen = []
def spy(Y, **kwargs):
    seen.append(type(Y).__name__)
    return ho_kashyap(Y, **kwargs)
with forced_plan(separability={"ho_kashyap": spy}):
    check_separability(to_device(X), to_device(y))

one_line = device_arrays.one_line
wide = X.copy(); wide[:, 1] *= 2.0 ** 60
refused = {"labels_only": one_line(lambda: check_separability(X, to_device(y))),
           "range": one_line(lambda: check_separability(to_device(wide), to_device(y))),
           "one_class": one_line(lambda: check_separability(to_device(X), to_device(np.zeros(80, dtype=np.int64))))}
print(json.dumps({"reference": reference, "fits": fits, "traffic": traffic, "seen": seen, "refused": refused}))
"""


@pytest.fixture(scope="module", params=ARRAYS)
def outcome(request):
    from device_arrays import run_checks  # a helper at the top of tests/

    return run_checks(CHECKS, request.param)


def test_the_verdicts_on_the_device_are_the_numpy_verdicts(outcome):
    for name, reference in outcome["reference"].items():
        fitted = outcome["fits"][name]
        assert "error" not in fitted, (name, fitted)
        assert len(fitted) == len(reference), name
        for got, want in zip(fitted, reference):
            # the same problem, the same verdict, each with a checked certificate of its kind
            assert (got["name"], got["status"], got["classes"], got.get("kind")) == \
                (want["name"], want["status"], want["classes"], want.get("kind")), (name, got, want)
            if got["method"] != want["method"]:
                # Ho–Kashyap's tol=0 stops where J stops changing to the bit, which the order of the sums decides:
                # one run may stop a few iterations earlier and leave the verdict to the linear programs
                continue
            if "32" not in name and got["method"] == "ho_kashyap":
                # float64: the same iteration to the same verdict (float32 products may get there at another iterate)
                assert got["n_iter"] == want["n_iter"], (name, got, want)
            if got.get("kind") == "plane":
                # HK's weights from the device's float64 factor (float64 X), or from float32 products (float32
                # X: the NumPy function converts to float64); both verdicts passed the same check
                tol = 1e-8 if "32" not in name else 1e-3
                assert got["margin"] == pytest.approx(want["margin"], rel=tol), (name, got, want)
                assert got["host"] and got["margin"] > 0
            if got.get("kind") == "proof":
                # the proof is reduced to a vertex (≤ d + 2 rows) on the host, from the same copy of X
                assert got["support"] == want["support"], (name, got, want)
                assert got["u"] == pytest.approx(want["u"], rel=1e-6, abs=1e-12), (name, got, want)
                assert got["host"] and got["residual"] <= 1e-9
    statuses = {row["status"] for rows in outcome["fits"].values() for row in rows}
    methods = {(row["status"], row["method"]) for rows in outcome["fits"].values() for row in rows}
    assert {"separable", "not_separable"} <= statuses
    # every path covered: HK's hyperplane and proof, the linear programs' verdicts
    assert {("separable", "ho_kashyap"), ("not_separable", "ho_kashyap"),
            ("not_separable", "linear_programming")} <= methods


def test_ho_kashyap_runs_on_the_device_design(outcome):
    assert outcome["seen"] == ["ArrayAPIDesign"]  # not a host copy of Y


def test_the_rows_cross_to_the_host_only_on_a_verdict_hk_leaves_to_the_host(outcome):
    traffic = outcome["traffic"]
    if not any(counts["host_copies"] for counts in traffic.values()):
        pytest.skip("host traffic is counted on the stand-in only")
    for name in ("separable", "separable32"):  # HK's plane checked on the device: no N-sized copy at all
        counts = traffic[name]
        # the pass's eight statistics (‖w‖² among them), the weights, the check's numbers
        assert counts["largest_copy"] <= 8 * 8, (name, counts)
        assert counts["scalars"] == 0, (name, counts)
    for name in ("noisy", "xor", "three", "three32"):
        counts = traffic[name]
        # X once per call in its own type (float64 on the host; every later problem reuses it), never more
        assert counts["largest_copy"] == counts["rows_bytes"], (name, counts)
        assert counts["host_bytes"] < 2 * counts["rows_bytes"] + 8 * 80 * 12 + 8 * 8 * counts["host_copies"], \
            (name, counts)


def test_what_cannot_be_decided_on_the_device_is_refused_in_one_line(outcome):
    refused = outcome["refused"]
    for name, refusal in refused.items():
        assert refusal is not None and "\n" not in refusal[1], (name, refusal)
    assert refused["labels_only"][0] == "TypeError" and "pass X on y's device" in refused["labels_only"][1]
    assert "rescale X" in refused["range"][1]
    assert "decides between two classes" in refused["one_class"][1]
