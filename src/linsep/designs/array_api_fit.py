"""Array-API input as the estimators' fit flow sees it: each problem's design on the input's device, its checks.

With ``sklearn.set_config(array_api_dispatch=True)``, an ``X`` of another
array-API namespace (PyTorch on any device, CuPy, array-api-strict) is
fitted where it lives: :class:`ArrayAPIFit` offers each step of the one fit
flow (``BaseSeparator._fit_where_data_live``) over
:class:`~linsep.designs.array_api.ArrayAPIDesign` problems: validation
summaries (shape, finite values, the columns' range, the classes: the
distinct labels are the one copy of the labels to the host), one
:class:`~linsep.designs.dask_fit.DesignProblem` per ``±1`` problem
(HKES's held-out rows drawn on the device as the NumPy fit draws them, or
``X_val, y_val`` on ``X``'s device), the work the problems share (the Gram
matrix, the LSVM's factor, MSE's linear machine), the checks of the
verdicts (an exact check of a non-separability certificate copies the
problem's rows to the host, float64, on that verdict only) and the model
in the input's namespace and on its device (``coef_``, ``intercept_``,
``classes_``).  The namespace is the one scikit-learn resolves for ``X`` (a
CUDA tensor or a CuPy array carries no ``__array_namespace__``).  What
crosses to the host during the solves is listed in
:mod:`linsep.designs.array_api`.  Weights (:meth:`ArrayAPIFit.weighted_rows`) are a device
vector and scale the rows (:meth:`~linsep.designs.array_api.ArrayAPIDesign.scaled`), as in
memory; traces are recorded on the device (:meth:`ArrayAPIFit.recorder`).  Columns that the
NumPy fit would rescale by powers of two are refused.  scikit-learn needs
``SCIPY_ARRAY_API=1`` in the environment for dispatch.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from linsep._core.certificates import FIT_PROOF_RTOL, is_proof
from linsep._core.plan import dtype_plan, working_dtype
from linsep._core.result import CONVERGED, SEPARABLE, SolveResult, demote_unproven
from linsep._core.signed_design import columns_out_of_range, safe_exponent
from linsep.designs.array_api import (ArrayAPIDesign, DeviceLSVMFactor, DeviceTraceRecorder, DeviceWeightedValidation,
                                      host_copy, read_scalars, to_host)
from linsep.designs.dask_fit import DesignProblem
from linsep.designs.weights import check_row_weights, class_weight_table

__all__ = ["ArrayAPIFit"]


class ArrayAPIFit:
    """The steps of a fit of array-API data on its device (the interface of :class:`~linsep.designs.dask_fit.DaskFit`).

    ``rescale_exponent``: the columns the NumPy fit would rescale (beyond
    :math:`2^{\\pm p}`) are refused; ``wide`` is unused (the device fits
    solve from the Gram matrix).
    """

    where = "array-API input"
    takes_weights = True  # sample_weight and class_weight as a device vector (weighted_rows)
    weights_where = "array-API arrays"
    traces_where = "array-API input"
    takes_traces = True  # for the families that hand their solver recorder(); the others refuse record_history
    labels_checked = False  # the distinct labels come as they are: the estimators check them as class labels

    def __init__(self, X, y, owner, *, wide=None, sample_weight=None, class_weight=None, rescale_exponent=None):
        from sklearn.utils._array_api import device, get_namespace

        xp, _ = get_namespace(X)
        where = device(X)
        if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
            raise ValueError(f"X must be 2-d with at least 2 samples and 1 feature, got shape {X.shape}")
        if not xp.isdtype(X.dtype, "real floating"):
            X = xp.astype(X, xp.float64)
        # the columns' largest and smallest values (NaN propagates through max and min, as the array API
        # specifies): finiteness and range in one copy of 2d numbers, with no N × d temporary (|X| or
        # isfinite(X) would hold one beside X on the device)
        extremes = to_host(xp.stack([xp.max(X, axis=0), xp.min(X, axis=0)]), xp)
        if not np.all(np.isfinite(extremes)):
            raise ValueError("Input X contains NaN or infinity.")
        largest = np.abs(extremes).max(axis=0)
        p = safe_exponent(working_dtype(X, xp=xp), rescale_exponent)  # the range the NumPy fit leaves as it is
        outside = np.flatnonzero(columns_out_of_range(largest, p))
        if outside.size:
            raise ValueError(f"column {outside[0]} of X has magnitudes up to {largest[outside[0]]:.3g}, outside "
                             f"2^±{p}; array-API input is not rescaled (NumPy input is, exactly): rescale X before "
                             "fitting")
        labels = _device_labels(y, xp, where)
        if tuple(labels.shape) != (X.shape[0],):
            raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got shape {tuple(labels.shape)}")
        self.xp, self.device, self.X, self.labels = xp, where, X, labels
        self.classes = host_copy(xp.unique_values(labels), xp)  # checked as class labels by the estimator
        self.n_features = X.shape[1]
        self.owner = owner
        self._all_rows = self._summary = self._gram_of = None
        self._sample_weight, self._class_weight = sample_weight, class_weight
        self.weights, self._weighed, self._kept = None, False, None
        self._class_table = self._validation_weights = None

    def recorder(self, record_history):
        """The trace recorder of ``record_history`` whose rows stay on the device (``None`` when it is falsy).

        :class:`~linsep.designs.array_api.DeviceTraceRecorder`: the rows are
        brought to the host once, in one copy, when the solver reads the trace.
        """
        return DeviceTraceRecorder.of(record_history, self.xp)

    def weighted_rows(self):
        """The fit's row weights ``s`` on the device (``sample_weight`` times ``class_weight``'s), or ``None``.

        As in memory (``BaseSeparator._sample_weight``, ``_fit_weighted``):
        ``class_weight`` is computed on the labels (``"balanced"``: ``N / (K
        n_k)`` from the class counts, ``K`` numbers copied), the weights are
        checked by :func:`linsep.designs.weights.check_row_weights` from a
        summary read in one copy (finite, non-negative, their range, positive
        on two classes), and rows of weight 0 leave the fit: ``X`` and the
        labels are then the rows of positive weight (one copy of them on the
        device, made only when some weight is 0).  ``sample_weight``: a NumPy
        array or a number (uploaded once), or a vector of ``X``'s namespace on
        its device.
        """
        if self._weighed:
            return self.weights
        self._weighed = True
        sample_weight, class_weight = self._sample_weight, self._class_weight
        if sample_weight is None and class_weight is None:
            return None
        xp, labels, n = self.xp, self.labels, self.X.shape[0]
        if sample_weight is None:
            s = xp.ones(n, dtype=xp.float64, device=self.device)
        elif isinstance(sample_weight, (np.ndarray, np.generic, list, tuple, int, float)):
            host = np.asarray(sample_weight, dtype=np.float64)
            s = xp.asarray(np.full(n, float(host)) if host.ndim == 0 else host, device=self.device)
        else:
            s = xp.astype(_device_vector(sample_weight, xp, self.device, "sample_weight"), xp.float64)
        if tuple(s.shape) != (n,):
            raise ValueError(f"sample_weight.shape == {tuple(s.shape)}, expected ({n},)!")
        if class_weight is not None:
            counts = host_copy(xp.unique_counts(labels)[1], xp)  # classes are sorted, as unique_counts returns them
            self._class_table = class_weight_table(class_weight, self.classes, self.owner,
                                                   np.repeat(self.classes, counts))
            s = s * self._class_rows(labels)
        positive = s > 0
        infinity = xp.asarray(np.inf, dtype=xp.float64, device=self.device)
        values = read_scalars(xp, [xp.all(xp.isfinite(s)), xp.min(s), xp.min(xp.where(positive, s, infinity)),
                                   xp.max(s)] + [xp.any(positive & (labels == c.item())) for c in self.classes])
        check_row_weights(self.owner, finite=bool(values[0]), smallest=values[1],
                          positive_range=(values[2], values[3]), positive_per_class=np.asarray(values[4:]) > 0)
        if values[1] == 0:  # rows of weight 0 leave, as in memory
            self.X, self.labels, s, self._kept = self.X[positive], labels[positive], s[positive], positive
        self.weights = s
        return s

    def stack(self, arrays, axis=0):
        return self.xp.stack(arrays, axis=axis)

    def host(self, value):
        """A starting weight (NumPy or of ``X``'s namespace) on the host: an explicit copy of ``p`` numbers."""
        return value if value is None or isinstance(value, (np.ndarray, list, tuple, int, float)) else \
            host_copy(value, self.xp)

    @property
    def positives(self):
        return [self.classes[1]] if self.classes.size == 2 else list(self.classes)

    def _designs(self, X, labels):
        xp = self.xp
        one = xp.ones(labels.shape, dtype=X.dtype, device=self.device)
        return [ArrayAPIDesign(X, xp.where(labels == c.item(), one, -one), xp, self.device) for c in self.positives]

    def problems(self, *, early_stopping=False, validation_fraction=None, random_state=None, X_val=None,
                 y_val=None, powers=(0.5,)):
        """One problem per ``±1`` column; early stopping's validation rows given or held out on the device."""
        weights = self.weighted_rows()
        X, labels, classes, xp = self.X, self.labels, self.classes, self.xp
        designs = self._designs(X, labels)
        validation = [None] * len(designs)
        if X_val is not None:
            X_val, labels_val = self._validation_data(X_val, y_val)
            validation = self._designs(X_val, labels_val)
            values, counts = xp.unique_counts(labels_val)  # what the warning of an unregularised fit reads of y_val
            self._summary = (np.repeat(host_copy(values, xp), host_copy(counts, xp)), X.shape[0])
            if weights is not None and self._class_table is not None:  # given rows: class_weight's weights only
                validation = self._weighed_validation(validation, labels_val, self._class_rows(labels_val),
                                                      self._summary[0])
        elif early_stopping:
            fitted, held_out, counts = self._held_out_split(validation_fraction, random_state)
            validation = self._designs(X[held_out], labels[held_out])
            self._all_rows = (designs, fitted)
            designs = self._designs(X[fitted], labels[fitted])
            self._summary = (np.repeat(classes, counts), int(X.shape[0] - counts.sum()))
            if weights is not None:  # the held-out rows keep their weights
                validation = self._weighed_validation(validation, labels[held_out], weights[held_out],
                                                      self._summary[0])
                weights = weights[fitted]
        if weights is not None:  # the rows s_i^power y_i (x_i, 1): X itself, the scale on the labels
            roots = {power: weights ** power for power in powers}
            top = max(powers)
            self._gram_of = designs[0].scaled(roots[top])
            return [DesignProblem(design=design.scaled(roots[top]), checked=design, validation=val, weights=weights,
                                  scaled=lambda power, design=design: design.scaled(roots[power]))
                    for design, val in zip(designs, validation)]
        self._gram_of = designs[0]
        return [DesignProblem(design=design, checked=design, validation=val)
                for design, val in zip(designs, validation)]

    def cross_validation(self, draw, partitions, powers=(0.5,)):
        """The folds of a cross-validated fit on the device: :class:`~linsep.designs.array_api_cv.DeviceFolds`.

        ``draw(X, labels, kept)`` draws the folds on the host labels as the NumPy fit does; ``partitions(folds,
        n)`` says whether they partition the rows; ``powers`` as in :meth:`problems`.
        """
        from linsep.designs.array_api_cv import DeviceFolds

        return DeviceFolds(self, draw, partitions, powers)

    def _class_rows(self, labels):
        """The weight ``class_weight`` gives each of ``labels`` (on the device; the table of the training labels)."""
        xp = self.xp
        per_row = xp.zeros(labels.shape[0], dtype=xp.float64, device=self.device)
        for label, weight in zip(self.classes, self._class_table):
            per_row = per_row + xp.astype(labels == label.item(), xp.float64) * float(weight)
        return per_row

    def _weighed_validation(self, designs, labels, weights, summary_labels):
        """The validation designs counting weighted errors, and what the warning of an unregularised fit reads.

        The warning reads the validation weights' sum per class only: those
        ``K`` sums are read (one copy) and spread evenly over the class's rows
        of the summary's labels, so no vector of ``N_val`` weights crosses to the host.
        """
        xp = self.xp
        sums = read_scalars(xp, [xp.sum(xp.where(labels == c.item(), weights, xp.zeros_like(weights)))
                                 for c in self.classes])
        spread = np.zeros(summary_labels.shape[0])
        for c, total in zip(self.classes, sums):
            members = summary_labels == c
            if members.any():
                spread[members] = total / members.sum()
        self._validation_weights = spread
        return [DeviceWeightedValidation(design, weights) for design in designs]

    def validation_weights(self):
        """The validation weights as the warning of an unregularised fit reads them (``None`` unweighted)."""
        return self._validation_weights

    def validation_summary(self):
        """``(validation labels on the host, fitted rows)``: what the warning of an unregularised fit reads."""
        return (None, None) if self._summary is None else self._summary

    def gram(self):
        """``YᵀY``, shared by the one-vs-rest problems (signs do not change it)."""
        return self._gram_of.gram()

    def largest_gram_eigenvalue(self, n_iter=30):
        """:math:`\\lambda_{\\max}(Y^t Y)` by ``largest_gram_eigenvalue``'s power iteration, on the device.

        The same seeded start (``p`` numbers, uploaded once) and the same
        ``n_iter`` steps with the Gram matrix on the device; the estimate is
        the one number read.  (The host loop stops early on a zero iterate,
        which a nonzero positive semi-definite ``YᵀY`` (its corner is ``N``)
        gives a random start with probability zero.)
        """
        xp = self.xp
        gram = self.gram()
        v = xp.asarray(np.random.RandomState(0).standard_normal(gram.shape[0]), dtype=xp.float64,
                       device=self.device)
        estimate = xp.zeros((), dtype=xp.float64, device=self.device)
        for _ in range(n_iter):
            v = v / xp.linalg.vector_norm(v)
            u = gram @ v
            estimate = xp.sum(v * u)
            v = u
        return read_scalars(xp, [estimate])[0]

    def margin_vector(self, margin):
        """``b`` on the device (``None``: ones), checked: one entry per sample, finite and strictly positive."""
        design = self._gram_of
        if margin is None:
            b = design.constant_vector(1.0)
        elif np.ndim(margin) == 0:
            b = design.constant_vector(float(margin))
        else:
            b = self._fitted_rows_of(design.vector(margin), "margin")
        if tuple(b.shape) != (self.X.shape[0],):
            raise ValueError(f"margin must be a number or have one entry per sample ({self.X.shape[0]}), "
                             f"got shape {tuple(b.shape)}")
        finite, smallest = read_scalars(self.xp, [self.xp.all(self.xp.isfinite(b)), self.xp.min(b)])
        if not finite or smallest <= 0:
            raise ValueError("margin must be finite and strictly positive (the MSE procedure needs b > 0)")
        return b

    def _fitted_rows_of(self, vector, name):
        """A per-row ``vector`` given for every row of ``X``, on the rows fitted (those of positive weight)."""
        if self._kept is None:
            return vector
        if tuple(vector.shape) != tuple(self._kept.shape):
            raise ValueError(f"{name} must have one entry per sample ({self._kept.shape[0]}), "
                             f"got shape {tuple(vector.shape)}")
        return vector[self._kept]

    def weighted_target(self, b):
        """``√s ∘ b``: the target of the weighted rows ``√s_i y_i`` (``b`` itself unweighted)."""
        return b if self.weights is None else b * self._gram_of.vector(self.weights ** 0.5)

    def lsvm_factor(self, C, cg_forcing):
        """The LSVM's factor, shared by the problems; weighted: of the rows ``√s_i h_i``, linear term ``√s``."""
        linear_term = None if self.weights is None else self._gram_of.vector(self.weights ** 0.5)
        return DeviceLSVMFactor(self._gram_of, C, linear_term=linear_term)

    def mse_problems(self, margin):
        """MSE's problems: the right-hand side ``b`` (a number on the device; a vector as given) as ``target``.

        Weighted: the target ``√s ∘ b`` of the rows ``√s_i y_i``, the margin stored ``b``.
        """
        problems = self.problems()
        weights = self.weights
        if weights is not None:
            b = self.margin_vector(margin)
            target = self.weighted_target(b)
        for problem in problems:
            if weights is not None:
                problem.target, problem.margin = target, b
                continue
            problem.target = problem.design.constant_vector(float(margin)) if margin is not None and \
                np.ndim(margin) == 0 else margin
        return problems

    def linear_machine(self, C, margin, traces=None):
        """MSE's linear machine (more than two classes) on the device: ``W = A⁺B`` with ``A = [X, 1]``.

        ``B`` holds ``b_i`` in the column of sample ``i``'s class (zeros
        elsewhere), as :func:`linsep.solvers.mse.mse_linear_machine` builds
        it; the solve is one ``p × K`` product with the W-step matrix of
        :class:`~linsep.designs.array_api.DeviceLeastSquares`.  ``separable``
        holds when every sample's own discriminant is strictly the largest,
        for the stored (rounded) model too; one scalar crosses to the host for
        it.  ``traces`` (one :meth:`recorder` per class) record
        :func:`~linsep.solvers.mse.mse_linear_machine`'s rows on the device:
        class ``k``'s ``a_k``, ``B[:, k]`` and ``e_k = A a_k − B[:, k]`` (of
        the weighted rows ``√s_i (x_i, 1)`` and targets ``√s_i b_i``, as in
        memory), its criterion ``‖e_k‖²`` and the machine's training errors
        (rows whose own discriminant is not strictly the largest), these
        ``K + 1`` numbers read in one copy; each recorder brings its rows to
        the host once.
        """
        weights = self.weighted_rows()  # weighted: the rows √s_i (x_i, 1) and targets √s_i b_i
        X, labels, classes, xp, where = self.X, self.labels, self.classes, self.xp, self.device
        one = xp.ones(labels.shape, dtype=X.dtype, device=where)
        design = ArrayAPIDesign(X, one, xp, where)  # all labels +1: A = [X, 1]
        b = one if margin is None else (design.constant_vector(float(margin)) if np.ndim(margin) == 0
                                        else self._fitted_rows_of(design.vector(margin), "margin"))
        members = xp.stack([labels == c.item() for c in classes], axis=1)  # (N, K), the own class of each row
        B = xp.where(members, b[:, None], xp.zeros_like(X[:, :1]))
        solved = design if weights is None else design.scaled(weights ** 0.5)
        factor = solved.least_squares_solver(C)
        target = B if weights is None else B * xp.astype(weights, X.dtype)[:, None]  # Aᵀ S B
        W = factor.solve_normal(xp.astype(xp.concat([X.T @ target, xp.sum(target, axis=0)[None, :]], axis=0),
                                          xp.float64))
        history = None if traces is None else self._machine_traces(traces, W, B, members, weights)
        weights = to_host(W, xp)  # p × K numbers, once
        coef = xp.asarray(weights[:-1, :].T, dtype=X.dtype, device=where)
        intercept = xp.asarray(weights[-1, :], dtype=X.dtype, device=where)
        scores = X @ coef.T + intercept  # the stored model's discriminants
        own = xp.sum(xp.where(members, scores, xp.zeros_like(scores)), axis=1)
        others = xp.max(xp.where(members, xp.full_like(scores, -xp.inf), scores), axis=1)
        separated = bool(xp.all(xp.isfinite(scores)) & xp.all(own - others > 0))
        return [SolveResult(weights=weights[:, k], n_iter=1, status=SEPARABLE if separated else CONVERGED,
                            margin=B[:, k], history=None if history is None else history[k],
                            extra={**factor.stats, "plan": dtype_plan(design.dtype)})
                for k in range(classes.size)]

    def _machine_traces(self, traces, W, B, members, weights):
        """The linear machine's trace per class (:meth:`linear_machine`), from ``W`` (``p × K``, float64) on the device."""
        xp, X = self.xp, self.X
        scores = X @ xp.astype(W[:-1, :], X.dtype) + xp.astype(W[-1, :], X.dtype)[None, :]  # A W, (N, K)
        target = B
        if weights is not None:  # the weighted rows √s_i (x_i, 1) and targets √s_i b_i
            root = xp.astype(weights ** 0.5, X.dtype)[:, None]
            scores, target = scores * root, B * root
        errors = scores - target
        own = xp.sum(xp.where(members, scores, xp.zeros_like(scores)), axis=1)
        others = xp.max(xp.where(members, xp.full_like(scores, -xp.inf), scores), axis=1)
        squares = xp.astype(errors, xp.float64) ** 2
        values = read_scalars(xp, [xp.sum(squares[:, k]) for k in range(W.shape[1])]
                              + [xp.sum(xp.astype(~(own - others > 0), xp.int64))])
        history = []
        for k, trace in enumerate(traces):
            trace.record(1, final=True, weights=W[:, k], margin_vector=target[:, k], error_vector=errors[:, k])
            history.append(trace.merge_into({"criterion": np.array([values[k]]),
                                             "training_errors": np.array([int(values[-1])])}))
        return history

    def checked(self, results, problems):
        """Proofs checked on the fitted rows (one explicit copy of them to the host, on that verdict only).

        With a held-out split a certificate is extended to every row, zero on
        the held-out ones, and so is it with rows of weight 0 (zero on them), as in memory.
        """
        xp = self.xp
        checked = [demote_unproven(result, lambda certificate, design=problem.checked: is_proof(
            to_host(design.X, xp), to_host(design.y, xp), to_host(certificate, xp), FIT_PROOF_RTOL))
            for result, problem in zip(results, problems)]
        masks = ([] if self._all_rows is None else [self._all_rows[1]]) + ([] if self._kept is None else [self._kept])
        if not masks:
            return checked
        return [result if result.certificate is None else replace(
            result, certificate=_expanded(xp, result.certificate, masks)) for result in checked]

    def linear_model(self, results):
        """``(coef, intercept)`` in ``X``'s namespace, type and device."""
        W = np.vstack([r.weights for r in results])
        xp = self.xp
        return (xp.asarray(W[:, :-1], dtype=self.X.dtype, device=self.device),
                xp.asarray(W[:, -1], dtype=self.X.dtype, device=self.device))

    def separates(self, problems, k, coef, intercept):
        """``separable`` must hold for the stored (rounded) model, on every row (held-out ones included)."""
        designs = [problem.checked for problem in problems] if self._all_rows is None else self._all_rows[0]
        stored = np.append(to_host(coef[k, ...], self.xp), float(intercept[k]))
        return designs[k].count_nonpositive(stored)[1] > 0

    def fitted_classes(self):
        """``classes_``: on the device for numeric labels (``predict`` takes from them), else NumPy."""
        return self.xp.asarray(self.classes, device=self.device) if self.classes.dtype.kind in "biuf" \
            else self.classes

    def read_scalars(self, scalars):
        return read_scalars(self.xp, scalars)

    def _held_out_split(self, fraction, random_state):
        """HKES's stratified hold-out split on the device: ``(fitted rows, held-out rows, held-out count per class)``.

        The rows are boolean masks of the labels; the split is the one
        ``BaseSeparator._held_out_rows`` draws for the same labels and
        ``random_state``: the random permutation of each class's members is
        drawn on the host (it depends only on their count) and sent to the
        device as a mask over the class's ranks, ``K`` small uploads; the
        labels themselves stay on the device.
        """
        labels, classes, xp = self.labels, self.classes, self.xp
        seed = random_state
        rng = seed if isinstance(seed, np.random.RandomState) else np.random.default_rng(seed)
        sizes = host_copy(xp.unique_counts(labels)[1], xp)  # classes are sorted, as unique_counts returns them
        held_out, counts = None, np.zeros(classes.size, dtype=np.int64)
        for k, (label, size) in enumerate(zip(classes, sizes)):
            members = labels == label.item()
            n_val = min(int(size) - 1, int(round(fraction * int(size))))
            chosen = np.zeros(int(size), dtype=bool)
            chosen[rng.permutation(int(size))[:n_val]] = True  # permutation(members) is members[permutation(size)]
            rank = xp.clip(xp.cumulative_sum(xp.astype(members, xp.int64)) - 1, min=0)  # a member's index among them
            mine = members & xp.take(xp.asarray(chosen, device=labels.device), rank)
            held_out = mine if held_out is None else held_out | mine
            counts[k] = n_val
        if counts.sum() == 0:
            raise ValueError(
                "early stopping needs a validation set, but validation_fraction="
                f"{fraction} of {labels.shape[0]} samples holds out none; "
                "give X_val/y_val or more samples")
        return ~held_out, held_out, counts

    def _validation_data(self, X_val, y_val):
        """Given validation data on ``X``'s device: ``(X_val as X's type, its labels)``, checked."""
        from sklearn.utils._array_api import get_namespace

        X, xp = self.X, self.xp
        if isinstance(X_val, np.ndarray) or get_namespace(X_val)[0].__name__ != xp.__name__:
            raise ValueError(f"X_val must be an array of X's namespace ({xp.__name__}) on X's device")
        if X_val.ndim != 2 or X_val.shape[1] != X.shape[1]:
            raise ValueError(f"X_val must have {X.shape[1]} columns, got shape {tuple(X_val.shape)}")
        labels = _device_labels(y_val, xp, self.device)
        if tuple(labels.shape) != (X_val.shape[0],):
            raise ValueError(f"validation labels must be a 1-d array with one label per row of X_val; "
                             f"got shape {tuple(labels.shape)} for {X_val.shape[0]} rows")
        unknown = np.setdiff1d(host_copy(xp.unique_values(labels), xp), self.classes)
        if unknown.size:
            raise ValueError(f"validation labels {unknown.tolist()} are not among the training classes")
        return xp.astype(X_val, X.dtype), labels


def _expanded(xp, vector, masks):
    """``vector`` of the rows each mask keeps, put back among all rows (zero elsewhere), innermost mask first."""
    for mask in masks:
        position = xp.clip(xp.cumulative_sum(xp.astype(mask, xp.int64)) - 1, min=0)  # row -> its kept row
        vector = xp.where(mask, xp.take(vector, position), xp.zeros(mask.shape, dtype=vector.dtype,
                                                                      device=_device_of(mask)))
    return vector


def _device_of(array):
    from sklearn.utils._array_api import device

    return device(array)


def _device_vector(values, xp, where, name):
    """``values`` of ``X``'s namespace on its device, checked (the namespace and the device)."""
    from sklearn.utils._array_api import device, get_namespace

    values_xp, _ = get_namespace(values)
    if values_xp.__name__ != xp.__name__:
        raise ValueError(f"{name} must be an array of X's namespace ({xp.__name__}) or a NumPy array, "
                         f"got one of {values_xp.__name__}")
    if device(values) != where:
        raise ValueError(f"{name} lives on {device(values)}, X on {where}: move {name} to X's device "
                         f"({name}.to_device(X.device))")
    return values


def _device_labels(y, xp, where):
    """The labels ``y`` in ``xp`` on ``where``: device labels as they are, host labels copied there once.

    The labels are read through the namespace scikit-learn resolves for ``X``
    (a CUDA tensor or a CuPy array has no ``__array_namespace__`` and refuses
    ``np.asarray``): the distinct labels are the one copy to the host.
    """
    if isinstance(y, (np.ndarray, list, tuple)):
        host = np.asarray(y)
        if host.dtype.kind not in "biuf":
            raise ValueError(f"labels of array-API input must be numbers or booleans, got dtype {host.dtype}; "
                             "encode them (sklearn.preprocessing.LabelEncoder) or fit NumPy arrays")
        return xp.asarray(host, device=where)
    return _device_vector(y, xp, where, "y")
