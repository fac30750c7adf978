"""``partial_fit`` for the sequential rules: one pass over each chunk of a stream.

The single-sample perceptron, LMS and the kernel perceptron visit one sample
at a time, so a stream of chunks can be learnt chunk by chunk with the same
compiled pass that ``fit`` makes over the whole data set.  The semantics are
scikit-learn's (``SGDClassifier.partial_fit``):

* the first call needs ``classes`` (every label the stream will ever hold);
  later calls may repeat them but not change them, and a label outside them
  is an error.  ``n_features_in_`` is fixed at the first call.
* each call makes **one** pass over the chunk (``max_iter`` is not used),
  starting from the current weights, in the order ``shuffle`` and
  ``random_state`` give: an int seed gives the same permutation to every
  chunk of a given size, a ``RandomState`` instance advances.
* ``partial_fit`` after ``fit`` continues from the fitted model; ``fit``
  after ``partial_fit`` starts over.

Learning-rate schedule.  ``fit``'s ``η_k`` is constant within pass ``k`` over
the data, so the pass number over the *whole stream* decides the rate, and a
chunk does not know on its own where a pass over the stream ends.  The caller
says it: ``partial_fit(..., epoch=k)`` uses ``η_k``; without ``epoch`` a call
keeps the previous call's position ``epoch_`` (1 on the first call; after
``fit``, ``fit``'s last pass).  Hence ``partial_fit`` over the chunks of a
data set, in order, with ``shuffle=False`` and ``epoch=1, 2, ...`` for the
first, second... pass over them, gives exactly the iterates of ``fit`` with
``shuffle=False`` and as many passes.  Counting calls instead would make the
size of the chunks change the rule.

Status.  ``status_`` after ``partial_fit`` speaks of the last chunk only:
``"separable"`` means that the current weights separate *that chunk* (for
the perceptrons: its pass made no correction, or the final weights clear the
margin on it), never that the data seen so far are separable together.  A
pass that ends otherwise reports what ``fit`` would after a one-pass budget
(``"max_iter"``, or ``"converged"`` for LMS when the pass moved the weights
by at most ``tol``), without a ConvergenceWarning: one pass is what was
asked for.  ``n_iter_`` counts the passes made since the model was started
(``fit``'s passes plus one per ``partial_fit`` call); ``history_`` describes
the last call.

Scale.  ``fit`` rescales columns whose magnitudes lie beyond ``2^±p``
(:func:`linsep._core.signed_design.column_shifts`) by powers of two for the whole data
set.  A stream has no whole data set — a scale fixed on the first chunk
may not suit the next — so ``partial_fit`` refuses such a chunk with a
``ValueError`` instead; ordinary data never meet this.  LMS's ``fit`` also
rescales columns beyond ``2^±8`` to precondition the rule; ``partial_fit``
does not (it works in the original columns, so its iterates equal ``fit``'s
only on data within ``2^±8``, and after such a preconditioned ``fit`` it sets
its own ``η_1`` on the next chunk, since ``fit``'s applies to the rescaled
columns).

Class weights.  ``class_weight`` weighs each chunk's rows as it weighs
``fit``'s (the weighted corrections ``η s_i y_i``, for LMS ``√s_i`` on rows
and margins), through the same validation (:func:`linsep.estimators.base.row_class_weights`):
a dict of finite non-negative weights; rows of weight 0 leave the chunk.
``"balanced"`` is refused, as by scikit-learn's ``partial_fit``: it needs
the class counts of the whole data, which a stream never sees.

A refused chunk changes nothing.  When a chunk is refused — invalid, or
a pass that overflowed (e.g. a chunk far larger in scale than the stream's
learning rate allows) — the estimator is left exactly as it was before the
call, and the stream can go on with the next chunk.
"""

from __future__ import annotations

import contextlib
import dataclasses
from numbers import Integral

import numpy as np
from sklearn.utils.multiclass import _check_partial_fit_first_call, check_classification_targets
from sklearn.utils.validation import validate_data


from linsep.estimators.base import FitContext, encode_pm1, row_class_weights
from linsep._core.signed_design import column_shifts
from linsep._core.plan import validation_dtypes
from linsep._core.finite import require_finite_model

__all__ = ["StreamMixin"]


class StreamMixin:
    """Shared validation and bookkeeping of ``partial_fit`` (primal and dual sequential rules)."""

    @contextlib.contextmanager
    def _chunk_or_nothing(self):
        """Restore the estimator's state as it was if the block raises: a refused chunk changes nothing."""
        state = dict(self.__dict__)
        try:
            yield
        except BaseException as exc:
            self.__dict__.clear()
            self.__dict__.update(state)
            if isinstance(exc, (FloatingPointError, OverflowError)) and len(exc.args) == 1 \
                    and isinstance(exc.args[0], str):  # a pass that failed: say that the stream can go on
                exc.args = (f"{exc.args[0]} (the chunk was refused; the estimator is as before this call)",)
            raise

    def _chunk_weights(self, y):
        """``class_weight``'s weight of each row of the chunk labels ``y``, or ``None`` without class weights."""
        if getattr(self, "class_weight", None) is None:
            return None
        return row_class_weights(self, y, stream=True)

    def _validate_chunk(self, X, y, classes, epoch):
        """Validate one chunk against the stream; return ``(X, targets, first, epoch, weights, rows)``.

        ``targets`` are the ``±1`` columns of :func:`linsep.estimators.base.encode_pm1`
        for the classes fixed at the first call; ``weights`` the rows'
        ``class_weight`` weights (``None`` without), ``X``, ``targets`` and
        ``weights`` restricted to the rows of positive weight, whose indices
        are ``rows`` (``None``: every row).
        """
        first = not hasattr(self, "classes_")
        if first and classes is None:
            raise ValueError(f"classes must be passed on the first call to {type(self).__name__}.partial_fit")
        # The stream keeps the type of its first chunk, as fit keeps the type of its data (float32 stays
        # float32 where the estimator reads it); later chunks are converted to it.
        self._refuse_device_input(X, y, f"{type(self).__name__}.partial_fit")
        coef = None if first else getattr(self, "coef_", None)
        dtype = validation_dtypes(self._dtypes, stream=None if coef is None else coef.dtype)
        X, y = validate_data(self, X, y, reset=first, accept_sparse=self._accept_sparse, dtype=dtype,
                             ensure_min_samples=1, y_numeric=False)
        check_classification_targets(y)
        if column_shifts(X) is not None:  # the dtype's safe range, not a rule's preconditioning range
            # fit rescales such columns by powers of two for the whole data set; a stream has no
            # whole data set, and a scale fixed on one chunk may not suit the next: refuse.
            raise ValueError(
                f"{type(self).__name__}.partial_fit needs the magnitudes of X within 2^-p .. 2^p per column "
                f"(p = {np.finfo(X.dtype).nmant + 1} for {X.dtype}); some column of this chunk lies outside. "
                "Rescale the stream (the same factors for every chunk) or use fit, which rescales exactly.")
        known = np.unique(np.asarray(classes)) if first else self.classes_
        if known.size < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes, got classes={classes!r}")
        unknown = np.setdiff1d(np.unique(y), known)
        if unknown.size:
            raise ValueError(f"labels {unknown.tolist()} are not among the classes {known.tolist()} "
                             "given at the first call to partial_fit")
        _check_partial_fit_first_call(self, classes)  # sets classes_ on the first call, checks them later
        if epoch is None:
            epoch = 1 if first else self.epoch_
        elif not isinstance(epoch, Integral) or isinstance(epoch, bool) or epoch < 1:
            raise ValueError(f"epoch must be an integer >= 1, got {epoch!r}")
        targets, _ = encode_pm1(y, self.classes_)
        weights, rows = self._chunk_weights(y), None
        if weights is not None and not weights.all():  # rows of weight 0 leave, as in fit
            rows = np.flatnonzero(weights)
            if rows.size == 0:
                raise ValueError(f"{type(self).__name__}.partial_fit: every row of this chunk has class_weight 0; "
                                 "nothing to learn from it")
            X, targets, weights = X[rows], targets[rows], weights[rows]
        return X, targets, first, int(epoch), weights, rows

    def _passes_so_far(self, first, n_problems):
        return np.zeros(n_problems, dtype=np.int64) if first else np.broadcast_to(self.n_iter_, (n_problems,))

    def _finish_chunk(self, results, passes, epoch=None):
        """Count the passes, record the schedule position (rules with one), set status_/n_iter_/history_.

        No ConvergenceWarning: one pass is the budget that was asked for.
        """
        results = [dataclasses.replace(r, n_iter=int(passes[c]) + r.n_iter) for c, r in enumerate(results)]
        if epoch is not None:
            self.epoch_ = epoch
        self._unpack_common(results, warn=False)
        return results

    def _start_stream(self, X):
        """Fix, on the first chunk, what the rule derives from its training data (nothing by default)."""

    def _stream_ready(self):
        """Whether the fitted state applies to chunks in the original columns (else ``_start_stream`` again)."""
        return True

    def _partial_fit_primal(self, X, y, classes, epoch, **chunk_params):
        """One pass of ``_solve_chunk`` per binary problem, from the current ``coef_``/``intercept_``.

        A chunk that is refused, or whose pass fails, leaves the estimator as
        it was.  With ``class_weight`` each problem's ``_solve_chunk`` receives
        ``sample_weight`` (the positive weights of the rows kept); per-row
        arrays among ``chunk_params`` (a margin vector) lose the same rows.
        """
        with self._chunk_or_nothing():
            return self._partial_fit_primal_chunk(X, y, classes, epoch, **chunk_params)

    def _partial_fit_primal_chunk(self, X, y, classes, epoch, **chunk_params):
        n_rows = getattr(X, "shape", (None,))[0]
        X, targets, first, epoch, weights, rows = self._validate_chunk(X, y, classes, epoch)
        if weights is not None:
            if rows is not None:
                chunk_params = {name: np.asarray(value)[rows] if np.ndim(value) == 1 and len(value) == n_rows
                                else value for name, value in chunk_params.items()}
            chunk_params["sample_weight"] = weights
        n_problems = targets.shape[1]
        if first or not self._stream_ready():
            self._start_stream(X)
        if first:
            W = np.zeros((n_problems, X.shape[1] + 1))
        else:  # the rules update float64 weights; the stored ones may be rounded to the data's type
            W = np.column_stack([self.coef_, self.intercept_]).astype(np.float64)
        sign = self._positive_sign()  # pos_label = classes_[0]: the pass runs (and traces) with it as +1
        passes = self._passes_so_far(first, n_problems)
        results = [self._solve_chunk(X, sign * targets[:, c], sign * W[c], epoch, **chunk_params)
                   for c in range(n_problems)]
        self._store(self._finish_chunk(results, passes, epoch), FitContext())
        require_finite_model(self)
        if sign < 0:
            self._negate_model()
        return self
