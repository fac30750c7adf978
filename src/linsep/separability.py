"""Is a two-class data set linearly separable?  A verdict with a checked certificate.

Two classes are (strictly) linearly separable exactly when some
:math:`W = (w, w_0)` has :math:`Y W > 0` for the sign-normalised matrix
:math:`Y = \\operatorname{diag}(y)\\,[X,\\ \\mathbf{1}]`.  By Gordan's theorem
of the alternative, exactly one of these holds:

* there is :math:`W` with :math:`Y W > 0` (a separating hyperplane), or
* there is :math:`u \\ge 0`, :math:`u \\ne 0` with :math:`Y^t u = 0` (then
  :math:`0 = u^t Y W` for every :math:`W`, which is impossible if
  :math:`Y W > 0`).

:func:`~linsep.check_separability` first runs Ho–Kashyap, which ends either with a
separating :math:`W` or with the proof :math:`u = -E` (Lauer & Bloch 2006, §2.1;
Duda, Hart & Stork §5.9).  HK gives no bound on the iterations a proof needs,
so when its budget runs out the answer comes from an exact linear program
(scipy's HiGHS): the Gordan system
:math:`Y^t u = 0,\\ \\mathbf{1}^t u = 1,\\ u \\ge 0` for the certificate, or
:math:`Y W \\ge \\mathbf{1}` for the hyperplane.

Every certificate is checked before it is returned, independently of the
solver that found it (``linsep._core.certificates``): a hyperplane must put
every sample strictly on its side, with finite scores, in the original
units; a proof :math:`u` must satisfy

.. math::

    \\Bigl| \\sum_i u_i Y_{ij} \\Bigr| \\le \\mathit{rtol} \\sum_i u_i |Y_{ij}|

for every column :math:`j` (bias included), which no data with a separating
hyperplane of relative margin above :math:`\\mathit{rtol} = 10^{-9}` admit.  Columns of any
representable magnitude are first rescaled by powers of two
(``linsep._core.signed_design.column_shifts``; exact, and it changes neither the
verdict nor the certificates).  When no candidate passes its check, the
answer is ``undecided`` (``separable is None``, no certificate): never an
unchecked proof.

Array-API input (PyTorch, CuPy, ... with ``sklearn.set_config(array_api_dispatch=True)``)
is decided where it lives (``linsep.designs.array_api_separability``):
Ho–Kashyap on the row-normalised design and the check of its hyperplane run
on the device; only when they do not settle the verdict (a candidate proof,
or the budget spent) are ``X`` and the labels copied to the host, once per
call, for the proof's exact check or the linear programs.  The result is the
same, and its arrays are NumPy (:class:`SeparabilityResult`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_X_y

from linsep.designs.array_api_separability import separability_where_data_live
from linsep._core.certificates import (
    CERTIFICATE_RTOL,
    decision_scores,
    design_proof_residuals,
    proof_residuals,
    separates,
    side_tolerance,
)
from linsep._core.signed_design import column_shifts, scale_columns, sign_normalized, unscale_coef
from linsep._core.plan import forced
from linsep._core.result import NOT_SEPARABLE, SEPARABLE, UNDECIDED
from linsep.solvers.ho_kashyap.solver import ho_kashyap


@dataclass(frozen=True)
class SeparatingHyperplane:
    """``w·x + intercept`` is positive on ``classes[1]`` and negative on ``classes[0]``."""

    coef: np.ndarray
    intercept: float
    margin: float
    """Geometric margin :math:`\\min_i y_i (w \\cdot x_i + w_0) / \\lVert w \\rVert` (> 0)."""


@dataclass(frozen=True)
class NonSeparabilityProof:
    """:math:`u \\ge 0`, :math:`u \\ne 0` with :math:`\\sum_i u_i y_i (x_i, 1) = 0` (Gordan's alternative)."""

    u: np.ndarray
    """One weight per row of the ``X`` given (zero off the support)."""
    residual: float
    """Largest per-column relative residual :math:`|\\sum_i u_i Y_{ij}| / \\sum_i u_i |Y_{ij}|` (0 in exact arithmetic)."""

    @property
    def support(self):
        """Row indices with ``u_i > 0``: at most ``d + 2`` (Carathéodory), the points that explain the verdict."""
        return np.flatnonzero(self.u > 0)


@dataclass(frozen=True)
class SeparabilityResult:
    """Verdict of :func:`check_separability`.

    Its arrays (``classes``, the hyperplane's ``coef``, a proof's ``u``) are
    NumPy arrays on the host, for array-API input too: ``coef`` has ``d``
    numbers, and ``u`` was checked on the host's copy of ``X``.

    Attributes
    ----------
    separable : bool or None
        ``True`` / ``False`` with a checked certificate; ``None`` when
        undecided (no candidate certificate passed its check).
    certificate : SeparatingHyperplane, NonSeparabilityProof or None
        Checked before being returned; ``None`` when undecided.
    method : {"ho_kashyap", "linear_programming"}
        Which algorithm produced the certificate (the last one tried when
        undecided).
    classes : ndarray
        The two labels; ``classes[1]`` is the positive side.
    n_iter : int
        Ho–Kashyap iterations spent.

    See Also
    --------
    check_separability : The function that returns it.
    linsep.inspection.SeparabilityDisplay : Draws the verdict on two-feature data.

    Examples
    --------
    >>> from linsep import check_separability
    >>> verdict = check_separability([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 0, 1, 1])
    >>> verdict.separable, verdict.status, verdict.method
    (True, 'separable', 'ho_kashyap')
    >>> bool(verdict.certificate.margin > 0)
    True
    """

    separable: bool | None
    certificate: SeparatingHyperplane | NonSeparabilityProof | None
    method: str
    classes: np.ndarray
    n_iter: int

    @property
    def status(self):
        """``"separable"``, ``"not_separable"`` or ``"undecided"``."""
        return UNDECIDED if self.separable is None else SEPARABLE if self.separable else NOT_SEPARABLE

    def summary(self):
        """One line describing the verdict and the certificate that was checked.

        Returns
        -------
        str
            The verdict, the method that reached it and what was checked: the
            hyperplane's geometric margin, or the proof's support and residual.
        """
        c = self.certificate
        if self.separable is None:
            return (f"undecided ({self.method}): no separating hyperplane and no proof of non-separability "
                    f"passed the check (per-column relative residual <= {CERTIFICATE_RTOL:g})")
        if self.separable:
            return (f"separable ({self.method}): hyperplane with geometric margin {c.margin:.6g}, "
                    f"all points strictly on their side")
        rows = c.support
        shown = ", ".join(map(str, rows[:12])) + (", …" if rows.size > 12 else "")
        return (f"not separable ({self.method}): u >= 0 on {rows.size} points (rows {shown}) with "
                f"sum_i u_i y_i (x_i, 1) = 0 (largest relative residual per column {c.residual:.2e})")

    def to_dict(self):
        """The verdict and its certificate as JSON-ready Python values (rows are 0-based indices into ``X``).

        Returns
        -------
        dict
            ``status``, ``method``, ``negative``, ``positive``, ``n_iter`` and
            ``certificate`` (the hyperplane, or ``u`` with its rows).
        """
        out = {"status": self.status, "method": self.method, "negative": _plain(self.classes[0]),
               "positive": _plain(self.classes[1]), "n_iter": int(self.n_iter)}
        c = self.certificate
        if isinstance(c, SeparatingHyperplane):
            out["certificate"] = {"type": "hyperplane", "coef": c.coef.tolist(), "intercept": c.intercept,
                                  "margin": c.margin}
        elif isinstance(c, NonSeparabilityProof):
            rows = c.support
            out["certificate"] = {"type": "proof", "rows": rows.tolist(), "u": c.u[rows].tolist(),
                                  "residual": c.residual}
        else:
            out["certificate"] = None
        return out


def _plain(label):
    return label.item() if isinstance(label, np.generic) else label


def proof_residual(Y, u):
    """Largest per-column relative residual :math:`|\\sum_i u_i Y_{ij}| / \\sum_i u_i |Y_{ij}|` of a candidate proof on ``Y``.

    ``Y`` is a sign-normalised matrix (any columns, the bias included); ``inf``
    if ``u`` is not ``>= 0, != 0``.  See ``linsep._core.certificates.proof_residuals``.
    """
    residuals = design_proof_residuals(Y if sp.issparse(Y) else np.asarray(Y), u)
    return np.inf if residuals is None else float(residuals.max())


def _norm(v):
    largest = np.abs(v).max(initial=0.0)
    return 0.0 if largest == 0 else float(largest * np.linalg.norm(v / largest))


def _hyperplane(X, y, shifts, W):
    """The checked hyperplane, in the original units, from weights ``W`` for the rescaled columns (or ``None``)."""
    if not np.all(np.isfinite(W)):
        return None
    try:
        coef = W[:-1] if shifts is None else unscale_coef(W[:-1], shifts)
    except ValueError:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.asarray(decision_scores(X, coef, W[-1])).ravel()
        tolerance = side_tolerance(X, coef, W[-1])
    if not separates(scores, y, tolerance):
        return None
    norm = _norm(coef)
    with np.errstate(over="ignore"):
        margin = float((y * scores).min() / norm) if norm > 0 else np.inf
    return SeparatingHyperplane(coef=coef.copy(), intercept=float(W[-1]), margin=margin)


def _proof(X, y, u):
    """The checked proof (``u`` unchanged: it is invariant to column scaling), or ``None``."""
    if u is None:
        return None
    u = np.maximum(np.asarray(u, dtype=float), 0.0)
    residuals = proof_residuals(X, y, u)
    if residuals is None or not np.all(residuals <= CERTIFICATE_RTOL):
        return None
    return NonSeparabilityProof(u, float(residuals.max()))


def _row_normalized(Y):
    # Positive row scaling changes neither separability nor the sign of any
    # certificate component, and keeps the linear programs well scaled.
    largest = (abs(Y).max(axis=1).toarray().ravel() if sp.issparse(Y) else np.abs(Y).max(axis=1))
    largest = np.where(largest > 0, largest, 1.0)
    Y = (sp.diags(1.0 / largest) @ Y) if sp.issparse(Y) else Y / largest[:, None]
    norms = np.sqrt(np.asarray(Y.multiply(Y).sum(axis=1)).ravel() if sp.issparse(Y)
                    else np.einsum("ij,ij->i", Y, Y))
    norms[norms == 0] = 1.0
    return (sp.diags(1.0 / norms) @ Y) if sp.issparse(Y) else Y / norms[:, None], norms * largest


def check_separability(X, y, *, max_iter=1000, pairwise=False):
    """Decide whether classes are linearly separable, with a checked certificate for each verdict.

    Parameters
    ----------
    X : array-like, sparse matrix or array-API array of shape (N, d)
        An array of another array-API namespace (a CUDA tensor, a CuPy
        array; scikit-learn's ``array_api_dispatch`` on) is decided on its
        device: Ho–Kashyap and the hyperplane's check run there, and ``X`` is
        copied to the host (once) only to check a proof or to run the linear
        programs (module docstring); its columns must not need rescaling.
    y : array-like of shape (N,)
        At least two distinct labels (with array-API ``X``: numbers, on its
        device or NumPy).
    max_iter : int, default=1000
        Ho–Kashyap budget per problem before the exact linear program decides.
    pairwise : bool, default=False
        With more than two classes, also decide every pair of classes (on
        their rows only).

    Returns
    -------
    SeparabilityResult or MulticlassSeparabilityResult
        For two classes, the verdict: ``separable`` is ``True`` or ``False``
        with a certificate that passed an independent check, or ``None``
        (``status == "undecided"``) when no candidate did.  For more, one
        such verdict per class against the rest (and per pair with
        ``pairwise``).  A proof of non-separability is reduced to at most
        ``d + 2`` rows (Carathéodory) before it is checked and returned.

    See Also
    --------
    HoKashyapClassifier : Plain HK gives the same kind of verdict on its training data.
    linsep.inspection.plot_separability : Draws the certified line and margin, or the proof's points.

    Examples
    --------
    >>> from linsep import check_separability
    >>> verdict = check_separability([[0, 0], [1, 1], [0, 1], [1, 0]], [0, 0, 1, 1])
    >>> verdict.separable, verdict.certificate.support.tolist()
    (False, [0, 1, 2, 3])
    >>> three = check_separability([[0, 0], [1, 0], [5, 5], [6, 5], [0, 9], [1, 9]], [0, 0, 1, 1, 2, 2])
    >>> {label: verdict.status for label, verdict in three.one_vs_rest.items()}
    {0: 'separable', 1: 'separable', 2: 'separable'}
    """
    # array-API X (PyTorch, CuPy, ...): Ho–Kashyap and the hyperplane's check on its device; the rows go to
    # the host once, explicitly, only where a proof must be checked or the linear programs decide
    device = separability_where_data_live(X, y)
    if device is not None:
        return _check_on_device(device, max_iter, pairwise)
    X, y = check_X_y(X, y, accept_sparse=("csr", "csc"), dtype=np.float64)
    check_classification_targets(y)
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(f"check_separability decides between two classes; got {len(classes)}")
    # Tests replace the solvers in a linsep._core.plan.forced_plan(separability=...) block (no private argument).
    plan = {"ho_kashyap": ho_kashyap, "linprog": linprog, **(forced("separability") or {})}
    if len(classes) == 2:
        return _check_two_classes(X, np.where(y == classes[1], 1.0, -1.0), classes, max_iter, plan)
    one_vs_rest = {_plain(label): _check_two_classes(X, np.where(y == label, 1.0, -1.0),
                                                     np.array(["rest", label], dtype=object), max_iter, plan)
                   for label in classes}
    pairs = None
    if pairwise:
        pairs = {}
        for i, negative in enumerate(classes):
            for positive in classes[i + 1:]:
                rows = np.flatnonzero((y == negative) | (y == positive))
                verdict = _check_two_classes(X[rows], np.where(y[rows] == positive, 1.0, -1.0),
                                             np.array([negative, positive]), max_iter, plan)
                pairs[_plain(negative), _plain(positive)] = _on_all_rows(verdict, rows, X.shape[0])
    return MulticlassSeparabilityResult(classes, one_vs_rest, pairs)


def _on_all_rows(verdict, rows, n_samples):
    """A verdict on the rows ``rows`` of X, its proof re-indexed to all ``n_samples`` rows."""
    if not isinstance(verdict.certificate, NonSeparabilityProof):
        return verdict
    u = np.zeros(n_samples)
    u[rows] = verdict.certificate.u
    proof = NonSeparabilityProof(u, verdict.certificate.residual)
    return SeparabilityResult(verdict.separable, proof, verdict.method, verdict.classes, verdict.n_iter)


@dataclass(frozen=True)
class MulticlassSeparabilityResult:
    """Verdicts of :func:`check_separability` for more than two classes.

    Attributes
    ----------
    classes : ndarray
        The labels, sorted.
    one_vs_rest : dict
        ``label -> SeparabilityResult`` of that class against all the others
        (``classes == ["rest", label]``: the hyperplane is positive on the class).
    pairwise : dict or None
        ``(label_a, label_b) -> SeparabilityResult`` on the rows of the two
        classes (``label_b`` positive), with ``pairwise=True``; a proof's
        ``u`` is indexed by the rows of the whole ``X``.
    """

    classes: np.ndarray
    one_vs_rest: dict
    pairwise: dict | None = None

    @property
    def separable(self):
        """``True`` if every class is separable from the rest, ``False`` if one is proved not to be, else ``None``.

        Every class separable from the rest implies that a linear machine
        separates all classes; the converse does not hold (see ``pairwise``).
        """
        verdicts = [v.separable for v in self.one_vs_rest.values()]
        return False if False in verdicts else None if None in verdicts else True

    @property
    def status(self):
        """``"separable"``, ``"not_separable"`` or ``"undecided"`` for :attr:`separable`."""
        return UNDECIDED if self.separable is None else SEPARABLE if self.separable else NOT_SEPARABLE

    def verdicts(self):
        """``(name, SeparabilityResult)`` of every problem: one-vs-rest first, then the pairs."""
        named = [(f"{label} vs rest", verdict) for label, verdict in self.one_vs_rest.items()]
        named += [(f"{a} vs {b}", verdict) for (a, b), verdict in (self.pairwise or {}).items()]
        return named

    def summary(self):
        """One line per problem: its name, verdict and certificate."""
        return "\n".join(f"{name}: {verdict.summary()}" for name, verdict in self.verdicts())

    def to_dict(self):
        """Every verdict and certificate as JSON-ready Python values (see :meth:`SeparabilityResult.to_dict`)."""
        return {"status": self.status, "classes": [_plain(c) for c in self.classes],
                "one_vs_rest": [v.to_dict() for v in self.one_vs_rest.values()],
                "pairwise": None if self.pairwise is None else [v.to_dict() for v in self.pairwise.values()]}


def _check_two_classes(X, signs, classes, max_iter, plan):
    """The verdict for labels ``signs`` (±1) of the rows of ``X``; ``classes[1]`` is the positive side.

    ``plan``: the ``ho_kashyap`` and ``linprog`` functions to decide with (:func:`check_separability`).
    """
    shifts, Xs, Yn, norms = _normalized(X, signs)
    hk = plan["ho_kashyap"](Yn, b0=1.0, max_iter=max_iter, tol=0.0, stop_at_separation=True)
    if hk.status == SEPARABLE:
        plane = _hyperplane(X, signs, shifts, hk.weights)
        if plane is not None:
            return SeparabilityResult(True, plane, "ho_kashyap", classes, hk.n_iter)
    return _decided_after_ho_kashyap(X, Xs, signs, shifts, Yn, norms, classes, hk.certificate, hk.n_iter, plan)


def _normalized(X, signs):
    """``(shifts, Xs, Yn, norms)``: the columns' power-of-two shifts, the rescaled ``X``, the row-normalised ``Y``."""
    shifts = column_shifts(X)
    Xs = X if shifts is None else scale_columns(X, shifts)  # exact; same verdict and certificates
    Yn, norms = _row_normalized(sign_normalized(Xs, signs))
    return shifts, Xs, Yn, norms


def _decided_after_ho_kashyap(X, Xs, signs, shifts, Yn, norms, classes, candidate, n_iter, plan):
    """The verdict once Ho–Kashyap found no checked hyperplane: its candidate proof, else the linear programs."""
    if candidate is not None:
        # u for the row-normalised rows is a valid u for Y after rescaling by 1/‖Y_i‖.
        proof = _small_proof(Xs, signs, Yn, norms, candidate, plan["linprog"])
        if proof is not None:
            return SeparabilityResult(False, proof, "ho_kashyap", classes, n_iter)
    return _decide_by_linear_programming(X, Xs, signs, shifts, Yn, norms, classes, n_iter, plan["linprog"])


def _check_on_device(device, max_iter, pairwise):
    """:func:`check_separability` of array-API data (``device``: :mod:`linsep.designs.array_api_separability`)."""
    classes = device.classes
    if len(classes) < 2:
        raise ValueError(f"check_separability decides between two classes; got {len(classes)}")
    plan = {"ho_kashyap": ho_kashyap, "linprog": linprog, **(forced("separability") or {})}
    if len(classes) == 2:
        return _check_device_problem(device.one_vs_rest(classes[1]), classes, max_iter, plan)
    one_vs_rest = {_plain(label): _check_device_problem(device.one_vs_rest(label),
                                                        np.array(["rest", label], dtype=object), max_iter, plan)
                   for label in classes}
    pairs = None
    if pairwise:
        pairs = {(_plain(negative), _plain(positive)): _check_device_problem(
            device.pair(negative, positive), np.array([negative, positive]), max_iter, plan)
            for i, negative in enumerate(classes) for positive in classes[i + 1:]}
    return MulticlassSeparabilityResult(classes, one_vs_rest, pairs)


def _check_device_problem(problem, classes, max_iter, plan):
    """One problem's verdict: HK and the hyperplane's check on the device, the rest on the host's copy of the rows."""
    hk = problem.solve(plan["ho_kashyap"], max_iter)
    if hk.status == SEPARABLE:
        plane = problem.hyperplane(hk.weights)
        if plane is not None:
            coef, intercept, margin = plane
            return SeparabilityResult(True, SeparatingHyperplane(coef, intercept, margin), "ho_kashyap", classes,
                                      hk.n_iter)
    X, signs, candidate, rows = problem.host_problem(hk.certificate)  # the explicit copy, on this verdict only
    shifts, Xs, Yn, norms = _normalized(X, signs)
    verdict = _decided_after_ho_kashyap(X, Xs, signs, shifts, Yn, norms, classes, candidate, hk.n_iter, plan)
    return verdict if rows is None else _on_all_rows(verdict, rows, problem.data.n_samples)


def _gordan_vertex(Yn, linprog):
    """A vertex of ``{u >= 0 : Ynᵀu = 0, 1ᵀu = 1}`` (HiGHS simplex), or ``None`` if it is empty.

    A vertex has at most as many nonzero entries as there are equations,
    ``p + 1`` for ``p`` columns (Carathéodory's bound ``d + 2``).
    """
    n_samples, n_cols = Yn.shape
    A_eq = sp.vstack([sp.csr_matrix(Yn.T), sp.csr_matrix(np.ones((1, n_samples)))]) if sp.issparse(Yn) \
        else np.vstack([Yn.T, np.ones((1, n_samples))])
    b_eq = np.concatenate([np.zeros(n_cols), [1.0]])
    gordan = linprog(np.zeros(n_samples), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
    return np.maximum(gordan.x, 0.0) if gordan.status == 0 else None


def _small_proof(Xs, signs, Yn, norms, u_normalized, linprog):
    """The checked proof from a candidate ``u`` for the rows of ``Yn``, on at most ``d + 2`` rows if possible.

    The Gordan system restricted to the candidate's support is feasible, and
    its vertex solution needs at most ``d + 2`` rows; that reduced proof is
    returned if it passes the check, else the candidate itself if it does.
    """
    support = np.flatnonzero(np.asarray(u_normalized) > 0)
    if support.size > Yn.shape[1] + 1:
        vertex = _gordan_vertex(Yn[support], linprog)
        if vertex is not None:
            reduced = np.zeros(Yn.shape[0])
            reduced[support] = vertex
            proof = _proof(Xs, signs, reduced / norms)
            if proof is not None:
                return proof
    return _proof(Xs, signs, np.asarray(u_normalized) / norms)


def _decide_by_linear_programming(X, Xs, signs, shifts, Yn, norms, classes, n_iter, linprog):
    n_samples, n_cols = Yn.shape
    vertex = _gordan_vertex(Yn, linprog)
    if vertex is not None:
        proof = _small_proof(Xs, signs, Yn, norms, vertex, linprog)
        if proof is not None:
            return SeparabilityResult(False, proof, "linear_programming", classes, n_iter)
    primal = linprog(np.zeros(n_cols), A_ub=-Yn, b_ub=-np.ones(n_samples),
                     bounds=(None, None), method="highs")
    if primal.status == 0:
        plane = _hyperplane(X, signs, shifts, primal.x)
        if plane is not None:
            return SeparabilityResult(True, plane, "linear_programming", classes, n_iter)
    return SeparabilityResult(None, None, "linear_programming", classes, n_iter)
