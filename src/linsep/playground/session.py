"""The playground's logic, without a browser: presets, one traced fit, its frames and texts.

Everything the web page shows comes from a :class:`Run`: the estimator is
fitted once with ``record_history=True`` and the page scrubs through the rows
of :func:`linsep.inspection.trace_table`.  Nothing here imports Bokeh, so the
logic is tested (and usable) without it.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field

import numpy as np

import linsep
from linsep._core.certificates import side_tolerance
from linsep.inspection import get_trace, trace_table
from linsep.kernels import kernel_matrix, resolve_gamma

__all__ = ["Preset", "PRESETS", "PARAMETERS", "DEFAULT_SEED", "method_parameters", "method_label", "accepts_start",
           "is_randomised", "why_not_runnable", "runnable_methods", "parse_value", "parse_vector", "fit_run", "Run",
           "points_csv"]

# The parameters the page offers, in display order, with their labels.  A
# method shows those of them it has (constructor or ``fit`` argument).
PARAMETERS = {
    "learning_rate": "η (learning rate)",
    "b0": "b(1) = b0",
    "C": "C",
    "margin": "margin",
    "schedule": "schedule",
    "max_iter": "max_iter",
    "kernel": "kernel",
    "gamma": "gamma",
    "degree": "degree",
    "coef0": "coef0",
    "shuffle": "shuffle",
    "random_state": "seed (random_state)",
}
DEFAULT_SEED = 0
"""The seed a playground fit uses when none is typed: the same button gives the same run."""
CHOICES = {"schedule": ["constant", "inverse"], "kernel": ["linear", "poly", "rbf", "sigmoid"],
           "shuffle": ["True", "False"]}
KERNEL_PARAMETERS = ("kernel", "gamma", "degree", "coef0")

LECTURE_X = [[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]]
LECTURE_Y = [1, 1, -1, -1]


@dataclass(frozen=True)
class Preset:
    """A ready-made problem: points, labels (±1) and the method and settings to try on them.

    Parameters
    ----------
    name : str
        Key of :data:`PRESETS`.
    title : str
        What the page's menu shows.
    X : ndarray of shape (N, 2)
        The points.
    y : ndarray of shape (N,)
        Their classes, ``+1`` or ``-1``.
    method : str
        A name of :func:`linsep.available_classifiers`.
    params : dict
        Parameters set on the page (``learning_rate``…).
    start : list of float or None
        Starting weights ``a(1) = [w0, w1, w2]`` (bias first, as the lecture writes them).
    """

    name: str
    title: str
    X: np.ndarray
    y: np.ndarray
    method: str = "hk"
    params: dict = field(default_factory=dict)
    start: list | None = None


def _projected_benchmark(name, n_points=60, seed=0):
    """``n_points`` samples of an IDA set, standardised and projected on its first two principal axes."""
    from linsep.datasets import load_benchmark

    X, y = load_benchmark(name)
    rng = np.random.default_rng(seed)
    keep = np.concatenate([rng.choice(np.flatnonzero(y == c), n_points // 2, replace=False) for c in (1, -1)])
    Z = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    _, _, Vt = np.linalg.svd(Z, full_matrices=False)
    P = Z[keep] @ Vt[:2].T
    return np.round(P, 3), y[keep].astype(int)


def _presets():
    presets = [
        Preset("lecture", "Lecture: Ho–Kashyap, 4 points (η = 0.9, b(1) = 1, a(1) = [1, 1, 1])",
               np.array(LECTURE_X), np.array(LECTURE_Y), "hk",
               {"learning_rate": "0.9", "b0": "1"}, [1.0, 1.0, 1.0]),
        Preset("xor", "XOR: not linearly separable (Ho–Kashyap's proof)",
               np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]), np.array([1, 1, -1, -1]), "hk"),
        Preset("perceptron", "Perceptron exercise: 6 points, η = 1, a(1) = 0, samples in order",
               np.array([[1.0, 1.0], [2.0, 2.0], [1.0, 3.0], [3.0, 0.0], [4.0, 1.0], [3.0, 3.0]]),
               np.array([1, 1, 1, -1, -1, -1]), "perceptron", {"learning_rate": "1", "shuffle": "False"},
               [0.0, 0.0, 0.0]),
    ]
    for name in ("thyroid", "heart", "diabetis"):
        presets.append(Preset(name, f"IDA {name}: 60 points on its first two principal axes",
                              None, None, "hk", {}, None))
    return {p.name: p for p in presets}


PRESETS = _presets()
"""The page's presets by name; the IDA ones load their points on first use (:func:`preset_points`)."""


def preset_points(name):
    """``(X, y)`` of a preset (the IDA sets projected to two features on first use)."""
    preset = PRESETS[name]
    if preset.X is None:
        return _projected_benchmark(name)
    return np.array(preset.X, dtype=float), np.array(preset.y, dtype=int)


def _fit_parameters(method):
    estimator = linsep.make_classifier(method)
    return estimator, set(inspect.signature(estimator.fit).parameters)


def method_parameters(method):
    """The page's parameters that ``method`` has, ``{name: default}`` in display order.

    ``margin`` is a constructor parameter of the perceptrons and a ``fit``
    argument of MSE, Widrow–Hoff and LMS (default ``None``: all ones).
    ``random_state`` is offered for the methods that draw random numbers
    (:func:`is_randomised`), with the page's default :data:`DEFAULT_SEED`.

    Parameters
    ----------
    method : str
        A name of :func:`linsep.available_classifiers`.

    Returns
    -------
    dict
        Parameter name to its default value.
    """
    estimator, fit_args = _fit_parameters(method)
    params = estimator.get_params()
    shown = {}
    for name in PARAMETERS:
        if name == "random_state" and not is_randomised(method):
            continue  # a seed that draws nothing (HK without early stopping) is not offered
        if name in params:
            shown[name] = params[name]
        elif name in fit_args:
            shown[name] = None
    return shown


def method_label(method):
    """The method's name in words with its registry code, as the page shows it: ``"Ho–Kashyap (hk)"``."""
    from linsep.estimators.registry import classifier_titles

    return f"{classifier_titles()[method]} ({method})"


def is_randomised(method):
    """Whether a fit of ``method`` draws random numbers: a held-out validation split, CV folds, or shuffling.

    These are the methods whose ``random_state`` changes the run (HK
    without early stopping has the parameter but never uses it).
    """
    params = linsep.make_classifier(method).get_params()
    if "random_state" not in params:
        return False
    return bool(params.get("early_stopping") or "cv" in params or params.get("shuffle"))


def why_not_runnable(method, X, y):
    """Why ``method`` cannot fit the points ``(X, y)``, or ``None`` when it can.

    Decided by the estimator's own rules, not a copy of them: the folds of a
    cross-validated method (:func:`linsep.estimators.cv_folds.stratified_folds`
    with its ``cv``) and the held-out split of early stopping (the estimator's
    ``_held_out_rows`` with its ``validation_fraction``).  Points of a single
    class, or none, are not judged here: the page asks for both classes when a
    fit starts.

    Parameters
    ----------
    method : str
        A name of :func:`linsep.available_classifiers`.
    X : array-like of shape (N, 2)
        The points.
    y : array-like of shape (N,)
        Their classes.

    Returns
    -------
    str or None
        The estimator's own error message, e.g. ``"cv=5 folds need at least
        5 samples, got 4"``.
    """
    from linsep.estimators.cv_folds import stratified_folds

    y = np.asarray(y).ravel()
    estimator = linsep.make_classifier(method)
    params = estimator.get_params()
    try:
        if isinstance(params.get("cv", None), (int, np.integer)) or ("cv" in params and params["cv"] is None):
            stratified_folds(y, 5 if params["cv"] is None else int(params["cv"]), DEFAULT_SEED)
        elif params.get("early_stopping") and len(np.unique(y)) >= 2:
            estimator.classes_ = np.unique(y)  # what _validate_fit sets before the split
            estimator.random_state = DEFAULT_SEED
            estimator._held_out_rows(y)
    except ValueError as exc:
        return str(exc)
    return None


def runnable_methods(X, y):
    """``{name: reason}`` for every registered method: ``""`` where it can fit ``(X, y)``, else why not."""
    return {name: why_not_runnable(name, X, y) or "" for name in linsep.available_classifiers()}


def accepts_start(method):
    """Whether ``method``'s ``fit`` takes starting weights (``coef_init`` and ``intercept_init``)."""
    _, fit_args = _fit_parameters(method)
    return {"coef_init", "intercept_init"} <= fit_args


def parse_value(text):
    """A number for numeric text, ``None`` for empty text, else the text itself (``"rbf"``, ``"scale"``)."""
    text = str(text).strip()
    if not text or text.lower() == "default":
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number


def parse_vector(text, size=None):
    """Numbers separated by commas or spaces (brackets allowed); ``None`` for empty text."""
    text = str(text).strip().strip("[]()").replace(",", " ")
    if not text:
        return None
    values = [float(v) for v in text.split()]
    if size is not None and len(values) != size:
        raise ValueError(f"starting weights need {size} numbers [w0, w1, w2], got {len(values)}")
    return values


def points_csv(X, y):
    """The points as CSV text that ``linsep fit`` reads: header ``x1,x2,y``, the label last."""
    lines = ["x1,x2,y"] + [f"{x1:.10g},{x2:.10g},{int(c)}" for (x1, x2), c in zip(np.asarray(X), np.asarray(y))]
    return "\n".join(lines) + "\n"


def _number(value, precision=4):
    value = float(value)
    if value == 0 or abs(value) < 1e-12:
        return "0"
    return f"{value:.{precision}g}"


def vector_text(values, precision=4, max_entries=8):
    """``[1, 2.5, -3]``: a vector as the page and the tables print it."""
    values = list(values)
    shown = [_number(v, precision) for v in values[:max_entries]]
    if len(values) > max_entries:
        shown.append(f"… ({len(values)})")
    return "[" + ", ".join(shown) + "]"


def fit_run(X, y, method, params=None, start=None):
    """Fit ``method`` on the points with a full trace and return the :class:`Run` the page scrubs.

    Parameters
    ----------
    X : array-like of shape (N, 2)
        The points.
    y : array-like of shape (N,)
        Their classes, ``+1`` or ``-1`` (``+1`` is the positive side of every trace).
    method : str
        A name of :func:`linsep.available_classifiers`.
    params : dict, optional
        Parameter values (numbers or text; empty text and ``None`` keep the
        default); names the method does not have are ignored.
    start : sequence of 3 floats, optional
        ``a(1) = [w0, w1, w2]``, for methods whose ``fit`` takes ``coef_init``.

    Returns
    -------
    Run

    Notes
    -----
    A method with a ``random_state`` is fitted with ``random_state``
    :data:`DEFAULT_SEED` unless ``params`` gives one, so the same points and
    settings always give the same run (its validation split, folds or sample
    order).
    """
    X = np.asarray(X, dtype=float).reshape(-1, 2)
    y = np.asarray(y, dtype=int).ravel()
    if X.shape[0] < 2 or len(set(y.tolist())) < 2:
        raise ValueError("add points of both classes first (at least one of each)")
    shown = method_parameters(method)
    constructor, fit_kwargs = {"record_history": True}, {}
    estimator = linsep.make_classifier(method)
    if "random_state" in estimator.get_params():
        constructor["random_state"] = DEFAULT_SEED
    for name, value in (params or {}).items():
        if name not in shown:
            continue
        value = parse_value(value) if isinstance(value, str) else value
        if value is None:
            continue
        if name == "random_state" and (isinstance(value, str) or value < 0 or value != int(value)):
            raise ValueError(f"the seed must be a whole number ≥ 0, not {value!r}")
        if name in ("max_iter", "degree", "random_state"):
            value = int(value)
        if name in estimator.get_params():
            constructor[name] = value
        else:
            fit_kwargs[name] = value
    if start is not None and accepts_start(method):
        start = [float(v) for v in start]
        fit_kwargs["coef_init"], fit_kwargs["intercept_init"] = start[1:], start[0]
    estimator = linsep.make_classifier(method, **constructor)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter's ConvergenceWarning: the verdict says it
        estimator.fit(X, y, **fit_kwargs)
    return Run(X, y, method, estimator)


class Run:
    """One traced fit on the page's points: frames, table rows, verdict and certificate.

    Parameters
    ----------
    X, y : ndarray
        The points and their ±1 classes.
    method : str
        The registered name fitted.
    estimator : fitted linsep estimator
        Fitted with ``record_history=True``.
    """

    def __init__(self, X, y, method, estimator):
        self.X, self.y, self.method, self.estimator = X, y, method, estimator
        self.trace = get_trace(estimator)
        self.table = trace_table(estimator)
        self.records = self.table.to_records()
        self.kernel = "dual_coef" in self.trace
        if self.kernel:
            est = estimator
            self._kernel_args = dict(kernel=est.kernel, gamma=resolve_gamma(est.gamma, est.X_fit_),
                                     degree=est.degree, coef0=est.coef0)

    def __len__(self):
        return len(self.records)

    @property
    def status(self):
        return str(self.estimator.status_)

    @property
    def n_iter(self):
        return int(np.ravel(self.estimator.n_iter_)[0])

    def k(self, i):
        """Iteration number of row ``i``."""
        return int(self.records[i]["k"])

    def weights(self, i):
        """``(w, w0)`` of row ``i`` for a primal model (``None`` for a kernel one)."""
        if self.kernel:
            return None
        a = np.asarray(self.trace["weights"][i], dtype=float)
        return a[:-1], float(a[-1])

    def decision(self, i, points):
        """Scores of row ``i``'s model at ``points`` (N, 2): ``w·x + w0`` or ``Σ α_i k(x_i, x) + b``."""
        points = np.asarray(points, dtype=float)
        if self.kernel:
            K = kernel_matrix(points, self.estimator.X_fit_, **self._kernel_args)
            return K @ np.asarray(self.trace["dual_coef"][i], dtype=float) + float(self.trace["intercept"][i])
        w, w0 = self.weights(i)
        return points @ w + w0

    def grid(self, i, x_range, y_range, size=100):
        """The scores on a ``size`` × ``size`` grid over the ranges (rows along y), for the decision regions."""
        xs = np.linspace(*x_range, size)
        ys = np.linspace(*y_range, size)
        gx, gy = np.meshgrid(xs, ys)
        return self.decision(i, np.c_[gx.ravel(), gy.ravel()]).reshape(size, size)

    def row(self, i):
        """The table row ``i`` as texts, keyed by column (``k``, ``a``, ``b``, ``e``, ``J``, ``errors``…)."""
        record = self.records[i]
        texts = {}
        for column, header in zip(self.table.columns, self.table.headers):
            value = record[column]
            if value is None:
                text = ""
            elif isinstance(value, tuple):
                text = vector_text(value)
            elif isinstance(value, (int, np.integer)):
                text = str(int(value))
            elif isinstance(value, str):  # the note of a returned row
                text = value
            else:
                text = _number(value)
            texts[column] = (header, text)
        return texts

    def returned(self, i):
        """Whether row ``i`` is the trace's returned row: the model is an earlier iterate (early stopping, a pocket)."""
        returned = self.trace.get("returned")
        return returned is not None and bool(returned[i])

    def misclassified(self, i):
        """Indices of the points not strictly on their side at row ``i``, as the trace's errors count them.

        A point within the rounding bound ``τ_i`` of the hyperplane
        (``linsep._core.certificates.side_tolerance``) is on it, and ringed.
        """
        points = np.asarray(self.X, dtype=float)
        if self.kernel:
            K = kernel_matrix(points, self.estimator.X_fit_, **self._kernel_args)
            tolerance = side_tolerance(K, self.trace["dual_coef"][i], self.trace["intercept"][i])
        else:
            tolerance = side_tolerance(points, *self.weights(i))
        signed = self.y * self.decision(i, points)
        with np.errstate(invalid="ignore"):
            return np.flatnonzero(~(np.isfinite(signed) & (signed > tolerance)))

    def verdict(self):
        """One line: the verdict and the iteration it was reached at (the final iterate, not a returned row)."""
        last = len(self) - 1
        status, k = self.status, self.k(last - 1 if self.returned(last) else last)
        words = {
            linsep.SEPARABLE: f"separable at k = {k}: every point strictly on its side",
            linsep.NOT_SEPARABLE: f"not separable (k = {k}): the proof u below",
            linsep.CONVERGED: f"converged at k = {k}",
            linsep.MAX_ITER: f"max_iter reached at k = {k} without a verdict",
        }
        text = words.get(status, f"{status} at k = {k}")
        best = getattr(self.estimator, "best_iter_", None)
        if best is not None:
            text += f"; early stopping returns the iterate k̂ = {int(np.ravel(best)[0])}"
        elif self.returned(last):
            text += f"; returns the pocket, the iterate k = {self.k(last)} of fewest training errors"
        return text

    def certificate(self):
        """What the end of the run proves, as a dict.

        ``{"kind": "hyperplane", "w", "w0", "margin"}`` when the last row
        separates the points (margin ``min y_i (w·x_i + w0) / ‖w‖``, plus SK's
        nearest hull points ``"hull_points"`` for ``sk`` and ``kozinec``);
        ``{"kind": "proof", "u", "rows"}`` for a not-separable verdict
        (``u >= 0`` on the rows that carry it, ``Σ u_i y_i (x_i, 1) = 0``);
        ``{"kind": "regions", "errors"}`` for a kernel model; ``None`` otherwise.
        """
        last = len(self) - 1
        u = getattr(self.estimator, "certificate_", None)
        if self.status == linsep.NOT_SEPARABLE and u is not None and np.ndim(u) == 1:
            u = np.asarray(u, dtype=float)
            rows = np.flatnonzero(u > 1e-9 * max(u.max(), 1e-300))
            residual = (u * self.y) @ np.c_[self.X, np.ones(len(self.y))]
            return {"kind": "proof", "u": u, "rows": rows, "residual": residual}
        if self.kernel:
            return {"kind": "regions", "errors": len(self.misclassified(last))}
        w, w0 = self.weights(last)
        norm = float(np.linalg.norm(w))
        if norm == 0 or len(self.misclassified(last)):
            return None
        margin = float(np.min(self.y * (self.X @ w + w0)) / norm)
        cert = {"kind": "hyperplane", "w": w, "w0": w0, "margin": margin}
        if self.method in ("sk", "kozinec"):
            cert["hull_points"] = nearest_hull_points(self.X, self.y)
        return cert

    def certificate_text(self):
        """The certificate in words (an empty string when there is none)."""
        cert = self.certificate()
        if cert is None:
            return ""
        if cert["kind"] == "proof":
            scale = float(cert["u"].max())
            u = ", ".join(f"u{i + 1} = {_number(cert['u'][i] / scale, 3)}" for i in cert["rows"])
            return (f"proof of non-separability: {u} (scaled to max 1; u ≥ 0, zero elsewhere) with "
                    f"Σ u_i y_i (x_i, 1) = {vector_text(cert['residual'] / scale, 2)}: "
                    "no hyperplane can separate these points")
        if cert["kind"] == "regions":
            return f"kernel decision regions: {cert['errors']} training point(s) on the wrong side"
        w, w0 = cert["w"], cert["w0"]
        text = f"separating hyperplane {hyperplane_text(w, w0)}, margin {_number(cert['margin'])}"
        if "hull_points" in cert:
            p, q = cert["hull_points"]
            text += f"; nearest hull points {vector_text(p, 3)} (+1) and {vector_text(q, 3)} (−1)"
        return text


def hyperplane_text(w, w0):
    """``2.5·x1 − 3·x2 + 1 = 0``: the hyperplane ``w·x + w0 = 0`` in the lecture's notation."""
    terms = [(w[0], "·x1"), (w[1], "·x2"), (w0, "")]
    text = ""
    for value, name in terms:
        sign = "−" if value < 0 else "+"
        number = _number(abs(value))
        text += (("−" if value < 0 else "") if not text else f" {sign} ") + number + name
    return text + " = 0"


def nearest_hull_points(X, y, n_iter=2000):
    """The nearest points of the two classes' convex hulls (the pair SK approaches), by Gilbert's algorithm.

    Returns ``(p, q)`` with ``p`` in the hull of class ``+1`` and ``q`` in
    that of ``-1``; ``‖p - q‖/2`` is the maximal margin.
    """
    P, Q = np.asarray(X[y == 1], float), np.asarray(X[y == -1], float)
    # Minkowski difference P - Q: its nearest point to the origin is p - q (Gilbert's algorithm),
    # kept as convex weights over P and Q so that p and q come back.
    a = np.full(len(P), 1.0 / len(P))
    b = np.full(len(Q), 1.0 / len(Q))
    for _ in range(n_iter):
        p, q = a @ P, b @ Q
        z = p - q
        i, j = int(np.argmin(P @ z)), int(np.argmax(Q @ z))
        direction = (P[i] - Q[j]) - z
        gap = -(direction @ z)
        if gap <= 1e-12 * max(1.0, z @ z):
            break
        t = min(1.0, gap / max(direction @ direction, 1e-300))
        a *= 1 - t
        a[i] += t
        b *= 1 - t
        b[j] += t
    return a @ P, b @ Q


def format_number(value):
    """A number as the page prints it (4 significant digits, rounding noise as 0)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return _number(value)
