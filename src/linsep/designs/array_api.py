"""The array-API design: ``Y = diag(y)[X, 1]`` on any array-API namespace (PyTorch, CuPy, array-api-strict).

Everything N-sized and the iteration itself stay in ``X``'s namespace and on
its device: the pass (``Z = Y W``, ``E``, :math:`B_{k+1}`, the rules'
statistics; :class:`linsep.solvers.ho_kashyap.step.NamespacePass` with this design's products), the
``p × p`` Gram matrix :math:`[X, 1]^T D [X, 1]`, its factor (:class:`DeviceFactor`: Cholesky, or the
eigenvectors of a rank-deficient system; never an explicit inverse) and the weights ``W``.
What crosses to the host, each an explicit copy (:func:`host_copy`, never an
implicit conversion):

* once per factorisation, one vector of its checks (the Gram matrix is
  finite, the Cholesky factor too, its pivots' range: ``PIVOT_TOL`` decides
  between Cholesky and the eigenvectors, as on the host);
* per iteration, the pass's seven statistics (``J``, the error count, ``min
  Z``, ``max E``, ``min E``, ``max |B|``, the fixed-point test) as one
  vector: the stopping rules read them;
* at the end, the returned ``W`` (``p`` numbers), and a trace's rows
  (:class:`DeviceTraceRecorder`: one copy of them all).

Sample weights scale the rows (:meth:`ArrayAPIDesign.scaled`: the labels carry
the scale, ``X`` is not copied), as :mod:`linsep.designs.weights` describes.

IRLS (absolute errors) solves each reweighted system on the device
(``xp.linalg.solve``; a rank-deficient one without a penalty from its
eigenvectors).  ``X`` keeps its type (float32 stays float32, with no float64
copy); the ``p × p`` Gram matrix, its factor and the weights are float64
(``p²`` and ``p`` numbers: a float32 factor saves nothing that matters and
no cheap test bounds its error).  Used with
``sklearn.set_config(array_api_dispatch=True)``
(:mod:`linsep.designs.array_api_fit`).
"""

from __future__ import annotations

import numpy as np

from linsep._core.linalg import PIVOT_TOL
from linsep._core.plan import FLOAT64_ONLY, working_dtype
from linsep._core.lsvm_update import LinearStepping
from linsep._core.trace import TraceRecorder, make_recorder
from linsep.designs.base import Design
from linsep.designs.weights import WeightedValidation, validation_weight_factor

__all__ = ["GRAM_ROW_BLOCKS", "ArrayAPIDesign", "DeviceFactor", "DeviceLSVMFactor",
           "DeviceLeastSquares", "DeviceTraceRecorder", "DeviceWeightedValidation", "host_copy", "read_scalars",
           "to_host", "triangular_solver"]


def host_copy(array, xp):
    """``array`` (of namespace ``xp``, on any device) copied to a NumPy array of its own type: one explicit copy.

    Never ``np.asarray(array)``: a CUDA tensor or a CuPy array refuses the
    implicit conversion.  scikit-learn's ``move_to`` copies through DLPack
    and falls back on each library's own method (``.cpu().numpy()``,
    ``.get()``).
    """
    try:
        from sklearn.utils._array_api import move_to
    except ImportError:  # scikit-learn < 1.8: the library-specific copy only
        from sklearn.utils._array_api import _convert_to_numpy

        return np.asarray(_convert_to_numpy(array, xp))
    return np.asarray(move_to(array, xp=np, device="cpu"))


def to_host(array, xp):
    """``array`` (of namespace ``xp``) as a float64 NumPy array (one explicit copy, :func:`host_copy`)."""
    return np.asarray(host_copy(array, xp), dtype=np.float64)


class ArrayAPIDesign(Design):
    """``Y = diag(y)[X, 1]`` for ``X`` (N, d) and labels ``y`` (±1) of the namespace ``xp``, never formed."""

    offers_compiled = False
    ndim = 2

    def __init__(self, X, y, xp, device=None, row_squares=None):
        self.X, self.y, self.xp, self.device = X, y, xp, device
        self.row_squares = row_squares  # y_i² where the rows are scaled (weights): the Gram matrix's D
        self.shape = (X.shape[0], X.shape[1] + 1)
        self.dtype = working_dtype(X, FLOAT64_ONLY, xp=xp)  # the solver's weights; the estimator returns them in X's type

    def scaled(self, r):
        """The design of the rows ``r_i y_i (x_i, 1)`` (``r > 0`` on the device, e.g. ``√s``): weights as scaled rows.

        :mod:`linsep.designs.weights`: every weighted criterion is the plain
        one on scaled rows; ``X`` is not copied (the labels carry the scale,
        the Gram matrix weighs its rows by ``r²``).
        """
        r = self.xp.astype(r, self.X.dtype)
        squares = r * r if self.row_squares is None else self.row_squares * r * r
        return ArrayAPIDesign(self.X, self.y * r, self.xp, self.device, row_squares=squares)

    # --- products in the namespace ------------------------------------------------------------------------
    def _in_x_type(self, W):
        """``W`` (the solver's float64 weights on the device, or host numbers) in ``X``'s type and place."""
        if isinstance(W, np.ndarray) or not hasattr(W, "shape"):
            return self.xp.asarray(np.asarray(W), dtype=self.X.dtype, device=self.device)  # host weights: upload
        return self.xp.astype(W, self.X.dtype)

    def scores(self, W):
        """``Y W`` in the namespace."""
        W = self._in_x_type(W)
        return self.y * (self.X @ W[:-1] + W[-1])

    def rmatvec(self, u):
        """``Yᵀ u`` on the device, float64 (``p`` numbers)."""
        xp = self.xp
        t = self.y * u
        return xp.astype(xp.concat([self.X.T @ t, xp.reshape(xp.sum(t), (1,))]), xp.float64)

    def gram(self, D=None):
        """``[X, 1]ᵀ D [X, 1]`` on the device, float64 (``p × p``; the products in ``X``'s type).

        With weights ``D`` the rows are weighted block by block
        (:data:`GRAM_ROW_BLOCKS` blocks): ``X D`` is never formed whole, so the
        device holds at most an eighth of ``X`` beside it.
        """
        xp, X = self.xp, self.X
        if self.row_squares is not None:  # scaled rows (weights): y_i² is no longer 1
            D = self.row_squares if D is None else D * self.row_squares
        if D is None:
            XtDX, column = X.T @ X, xp.sum(X, axis=0)
            corner = xp.reshape(xp.asarray(float(self.shape[0]), dtype=X.dtype, device=self.device), (1, 1))
        else:
            n = X.shape[0]
            step = max(1, -(-n // GRAM_ROW_BLOCKS))
            XtDX = None
            for start in range(0, n, step):
                stop = min(n, start + step)  # the array API leaves out-of-bounds slices unspecified
                rows = X[start:stop, :]
                block = rows.T @ (rows * D[start:stop, None])
                XtDX = block if XtDX is None else XtDX + block
            column, corner = X.T @ D, xp.reshape(xp.sum(D), (1, 1))
        top = xp.concat([XtDX, column[:, None]], axis=1)
        return xp.astype(xp.concat([top, xp.concat([column[None, :], corner], axis=1)], axis=0), xp.float64)

    # --- the Design protocol --------------------------------------------------------------------------
    def least_squares_solver(self, ridge, gram=None, minimum_norm=True, singular="eigh"):
        """The W-step's factor on the device (a singular system without ``C``: always from its eigenvectors).

        ``minimum_norm`` holds always (the direct factor); ``singular`` is
        accepted for the protocol, ``"eigh"`` being the only way here (the
        QR and SVD of ``Y`` would need a float64 copy of ``Y``).
        """
        return DeviceLeastSquares(self, self.gram() if gram is None else gram, ridge)

    def constant_vector(self, value):
        return self.xp.full(self.X.shape[0], float(value), dtype=self.X.dtype, device=self.device)

    def vector(self, values):
        if isinstance(values, np.ndarray) or isinstance(values, (list, tuple)):
            return self.xp.asarray(np.asarray(values), dtype=self.X.dtype, device=self.device)
        return self.xp.astype(values, self.X.dtype)

    def solve_target(self, factor, B, offset, **solve):
        return factor.solve_normal(self.rmatvec(B + offset))

    # --- what the Ho–Kashyap pass asks (linsep.solvers.ho_kashyap.step.NamespacePass) ----------------
    def read_scalars(self, values):
        return read_scalars(self.xp, values)

    def reweighted_factor(self, factor, D):
        return factor.reweighted(self.gram(D))

    def solve_weighted(self, factor, r, D):
        """``(YᵀDY + CĨ)⁻¹ YᵀD r`` on the device."""
        return factor.solve_normal(self.rmatvec(r if D is None else r * D))

    def count_nonpositive(self, W):
        xp = self.xp
        Z = self.scores(W)
        count, smallest, finite = read_scalars(xp, [xp.sum(xp.astype(Z <= 0, xp.int64)), xp.min(Z),
                                             xp.all(xp.isfinite(Z))])
        return int(count), float(smallest), bool(finite)

    def host(self, vector, dtype=None):
        return vector  # N-vectors stay in the namespace

    def solver_weights(self, W):
        """Starting weights on the device (float64): ``p`` numbers, copied once."""
        return self.xp.asarray(W, dtype=self.xp.float64, device=self.device)

    def host_weights(self, W, dtype):
        """The returned weights on the host: one copy of ``p`` numbers."""
        if isinstance(W, np.ndarray):
            return W.astype(dtype, copy=False)
        return to_host(W, self.xp).astype(dtype, copy=False)

    def weights_stand_still(self, W, W_prev, tol, rule):
        xp = self.xp
        step, size = read_scalars(xp, [xp.max(xp.abs(W - W_prev)), xp.max(xp.abs(W))])
        return bool(step <= tol * size)

    def checked_certificate(self, u):  # pragma: no cover - the direct factor never asks
        return u


class DeviceWeightedValidation(WeightedValidation):
    """:class:`~linsep.designs.weights.WeightedValidation` on the device: early stopping's weighted error count.

    ``design`` (an :class:`ArrayAPIDesign` of the validation rows) and their
    weights ``weight`` (a device vector) stay on the device; each count is
    :math:`\\sum_{i : (Y_{\\mathrm{val}} W)_i \\le 0} v_i` with ``v`` normalised to
    sum to ``N_val``, read with the smallest score in one copy.
    """

    def __init__(self, design, weight):
        xp = design.xp
        self.design, self.shape, self.xp = _Counted(design), design.shape, xp
        (total,) = read_scalars(xp, [xp.sum(weight)])
        self._weight = xp.astype(weight, xp.float64) * validation_weight_factor(total, weight.shape[0])

    def count_nonpositive(self, W):
        # the unweighted count too, in the same copy: a traced fit counts the held-out rows' errors unweighted
        # (design.count_nonpositive of the same W), which then costs no second copy
        xp = self.xp
        Z = self.design.scores(W)
        wrong = Z <= 0
        count, plain, smallest, finite = read_scalars(xp, [
            xp.sum(xp.where(wrong, self._weight, xp.zeros_like(self._weight))), xp.count_nonzero(wrong),
            xp.min(Z), xp.all(xp.isfinite(Z))])
        self.design.counted = (W, (int(plain), float(smallest), bool(finite)))
        return float(count), float(smallest), bool(finite)


class _Counted:
    """An :class:`ArrayAPIDesign` whose ``count_nonpositive`` of the weights last counted is already known."""

    def __init__(self, design):
        self._design, self.counted = design, None

    def __getattr__(self, name):
        return getattr(self._design, name)

    def count_nonpositive(self, W):
        if self.counted is not None and self.counted[0] is W:
            return self.counted[1]
        return self._design.count_nonpositive(W)


class DeviceTraceRecorder(TraceRecorder):
    """A :class:`~linsep._core.trace.TraceRecorder` whose rows stay on the device until the trace is read.

    ``record_history`` on array-API input: each recorded row (``a(k)``,
    ``b(k)``, ``e(k)``: the solver's vectors) is a float64 copy on the
    input's device, so recording costs no host copy; :meth:`as_dict` brings
    every row to the host in one explicit copy (:func:`host_copy` of all
    the rows concatenated: one device sync), and ``history_`` is then the
    NumPy trace of the in-memory fit.  The stride and the byte budget
    (:data:`~linsep._core.trace.TRACE_BUDGET_BYTES`) are the host
    recorder's, counted on the device: the trace holds at most that beside
    ``X`` there.
    """

    def __init__(self, xp, **options):
        super().__init__(**options)
        self.xp = xp

    @classmethod
    def of(cls, record_history, xp):
        """The recorder of ``record_history`` (as :func:`~linsep._core.trace.make_recorder`), or ``None``."""
        host = make_recorder(record_history)
        return None if host is None else cls(xp, stride=host.stride, budget_bytes=host.budget_bytes,
                                              per_update=host.per_update)

    def _kept(self, values):
        xp = self.xp
        return {name: np.array(value, dtype=float, copy=True) if _on_host(value) else
                xp.astype(value, xp.float64, copy=True) for name, value in values.items()}

    def as_dict(self, consume=False):
        self._to_host()
        return super().as_dict(consume)

    def _to_host(self):
        """Every row's device values replaced by host arrays: one copy of them all."""
        rows = [row for _, _, row in self._rows]
        rows += [held[1] for held in (self._returned, self._skipped_update) if held is not None]
        on_device = [(row, name) for row in rows for name, value in row.items() if not _on_host(value)]
        if not on_device:
            return
        xp = self.xp
        flat = host_copy(xp.concat([xp.reshape(row[name], (-1,)) for row, name in on_device]), xp)
        start = 0
        for row, name in on_device:
            shape = tuple(row[name].shape)
            size = int(np.prod(shape))
            row[name] = np.asarray(flat[start:start + size], dtype=float).reshape(shape)
            start += size


def _on_host(value):
    return isinstance(value, (np.ndarray, np.generic, int, float, bool, list, tuple))


GRAM_ROW_BLOCKS = 8
"""The blocks of rows a weighted Gram matrix (IRLS) is summed over: the weighted copy of a block, never of
``X``, is what the device holds beside ``X`` (an eighth of it)."""


def read_scalars(xp, scalars):
    """The 0-d arrays ``scalars`` on the host as float64 numbers: one copy for all of them (one device sync)."""
    return to_host(xp.stack([xp.astype(value, xp.float64) for value in scalars]), xp).tolist()


class DeviceLeastSquares:
    """The W-step ``(YᵀDY + CĨ)⁻¹ g`` of an :class:`ArrayAPIDesign`, on its device.

    The factor of ``YᵀY + CĨ`` (:meth:`DeviceFactor.least_squares`: Cholesky,
    or the eigenvectors that give the pseudo-inverse on the range of a
    rank-deficient ``Y``) is made once on the device and reused by every
    solve; nothing but one vector of its checks crosses to the host.  A
    reweighted system (IRLS, :meth:`reweighted`) is used for one solve:
    where it is definite (a penalty, or ``Y`` of full rank) that solve is
    ``xp.linalg.solve`` (one LU factorisation, which needs no pivot check: a
    Cholesky factor's would be a device sync per iteration); a rank-deficient
    one without a penalty gets its eigenvectors, also on the device.
    """

    def __init__(self, design, gram, ridge, *, factor=None, system=None, method=None):
        self.design, self.ridge = design, float(ridge)
        xp = design.xp
        if factor is None and system is None:
            factor = DeviceFactor.least_squares(xp, gram, self.ridge, design.shape[0])
        self._factor, self._system = factor, system  # system: one reweighted matrix solved as it is
        # a reweighted system reports the factorisation of the system it reweights, as on the host
        self.method = factor.method if method is None else method
        self.stats = {"factorization": self.method}

    def solve_normal(self, g):
        if self._system is not None:
            return self.design.xp.linalg.solve(self._system, g)
        return self._factor.solve(g)

    def reweighted(self, gram):
        """The solver of the reweighted system whose Gram matrix (``YᵀDY``, on the device) is ``gram``."""
        xp, design = self.design.xp, self.design
        if self.method == "cholesky" or self.ridge > 0:  # definite: one solve of the matrix as it is
            p = design.shape[1]
            free = xp.astype(xp.arange(p, device=design.device) < p - 1, xp.float64)  # the bias is not penalised
            penalty = xp.eye(p, dtype=xp.float64, device=design.device) * (self.ridge * free)
            return DeviceLeastSquares(design, None, self.ridge, system=gram + penalty, method=self.method)
        # rank-deficient without a penalty (D > 0 keeps Y's rank): the minimum-norm solve from its eigenvectors
        return DeviceLeastSquares(design, None, self.ridge, factor=DeviceFactor.least_squares(
            xp, gram, 0.0, design.shape[0], singular=True))


class DeviceLSVMFactor:
    """The linear LSVM's factor for :class:`ArrayAPIDesign`: :class:`linsep.solvers.lsvm.LSVMFactor`'s interface.

    ``S = I/C + [X, 1]ᵗ[X, 1]`` (``p × p``) is formed and factored on the
    device (:meth:`DeviceFactor.positive_definite`: Cholesky, or the
    eigenvectors with the spectrum floored at ``1/C``); each
    ``W_{k+1} = S⁻¹ g_k`` applies the factor there.  ``S`` does not depend on
    the labels: one factor serves every one-vs-rest problem.

    Weighted rows (penalty ``C s_i``, as ``lagrangian_svm``'s
    ``sample_weight``): ``design`` holds the rows ``√s_i h_i`` and
    ``linear_term`` is ``√s`` (on the device): the dual in ``β = α/√s``,
    whose linear term ``c = √s`` replaces ``1`` in the update
    (:func:`linsep._core.lsvm_update.dual_update`); the returned ``α`` is ``√s β``.
    """

    sample_weight = None  # the weights are in the rows and the linear term (lagrangian_svm takes none beside them)

    def __init__(self, design, C, linear_term=None):
        self.C, self.xp, self.device = float(C), design.xp, design.device
        self.linear_term = linear_term
        xp = self.xp
        p = design.shape[1]
        matrix = design.gram() + xp.eye(p, dtype=xp.float64, device=self.device) / self.C
        self._factor = DeviceFactor.positive_definite(xp, matrix, 1.0 / self.C)
        self.method = self._factor.method
        self.stats = {"factorization": self.method}

    def solve(self, g):
        return self._factor.solve(g)

    def stepper(self, design, mu):
        """The update (22) on the signed ``design``, started at ``α_0 = Q⁻¹1``."""
        return _DeviceLSVMStep(design, self, mu)


class DeviceFactor:
    """A symmetric ``p × p`` system factored once on the device; each solve applies the factor (no inverse is formed).

    ``"cholesky"``: ``S A S = L Lᵀ`` (``S`` a diagonal scaling, or none), a
    solve is ``S L⁻ᵀ L⁻¹ S g``: two triangular solves (see
    :func:`triangular_solver`).  ``"eigh"``: ``S A S = V Λ Vᵀ`` and a solve
    applies ``S V Λ⁺ Vᵀ S`` (``Λ⁺``: the reciprocals of the eigenvalues
    kept, zero on the others: the pseudo-inverse on the range, or the
    eigenvalues floored for a matrix definite in exact arithmetic), as
    :class:`~linsep._core.linalg.LeastSquaresFactor` and
    :class:`~linsep._core.linalg.PositiveDefiniteFactor` do on the host.  The
    factor, the scaling and the solves are on the device; building it reads
    one vector of numbers (the pivots' range, whether the factor is finite).

    The factor is float64 whatever the data's type (``p²`` numbers; the
    pivots' range only estimates the condition number from below, so it
    cannot vouch for a float32 factor's accuracy).  A solve takes and returns
    float64 vectors (the solver's weights, ``p`` numbers).
    """

    def __init__(self, xp, method, *, lower=None, evecs=None, inverse_evals=None, scale=None):
        self.xp, self.method = xp, method
        self._lower, self._evecs, self._inverse_evals, self._scale = lower, evecs, inverse_evals, scale
        self._upper = None if lower is None else lower.T
        self._triangular = None if lower is None else triangular_solver(xp)
        self.dtype = (lower if lower is not None else evecs).dtype

    @classmethod
    def least_squares(cls, xp, gram, ridge, n_samples, *, singular=False):
        """The W-step's factor of ``gram + CĨ`` (the bias unpenalised), as the host's ``LeastSquaresFactor``.

        Cholesky of the column-scaled system where its pivots pass
        ``PIVOT_TOL`` (with ``C > 0``, or ``p ≤ N``); else the eigenvectors of
        the scaled system with ``C > 0`` (eigenvalues below ``p ε λ_max``
        cut), or of the unscaled ``gram`` without it (below
        ``max(N, p) ε λ_max`` cut: the minimum-norm solve on the range, the
        in-memory fit's ``plan={"singular": "eigh"}``).  ``singular``: known
        singular without ``C`` (a reweighted rank-deficient system): straight
        to the eigenvectors, nothing read on the host.
        """
        p = gram.shape[0]
        eps = float(np.finfo(np.float64).eps)
        if not singular:
            diagonal = xp.linalg.diagonal(gram)
            norms = xp.sqrt(xp.clip(diagonal, min=0.0))
            norms = xp.where(norms == 0.0, xp.ones_like(norms), norms)
            scale = 1.0 / norms
            system = gram * scale[:, None] * scale[None, :]
            if ridge > 0:
                free = xp.astype(xp.arange(p, device=_device(gram)) < p - 1, xp.float64)  # the bias is not penalised
                system = system + xp.eye(p, dtype=xp.float64, device=_device(gram)) * (ridge * scale * scale * free)
            lower = _cholesky(xp, system) if ridge > 0 or p <= n_samples else None
            checks = [xp.all(xp.isfinite(gram))]
            if lower is not None:
                pivots = xp.abs(xp.linalg.diagonal(lower))
                checks += [xp.all(xp.isfinite(lower)), xp.min(pivots), xp.max(pivots)]
            values = read_scalars(xp, checks)  # the one read of a factorisation
            if not values[0]:
                # LAPACK's eigensolvers can loop forever on non-finite input: refused here, as on the host
                raise FloatingPointError(
                    "the least-squares system overflowed (non-finite YᵀDY): the data or the weights are too "
                    "extreme for this solver (for IRLS, raise irls_floor)")
            if lower is not None and values[1] and values[2] > PIVOT_TOL * values[3]:
                return cls(xp, "cholesky", lower=lower, scale=scale)
            if ridge > 0:
                return cls._spectral(xp, system, scale, cut=p * eps)
        # the minimum-norm solution of Y itself: the eigenvectors of the unscaled gram (a column scaling would
        # minimise another norm)
        return cls._spectral(xp, gram, None, cut=max(n_samples, p) * eps)

    @classmethod
    def positive_definite(cls, xp, matrix, floor):
        """The factor of ``matrix``, positive definite in exact arithmetic with spectrum ``≥ floor``.

        Cholesky, or (where rounding defeats it) the eigenvectors with the
        eigenvalues floored at ``floor``, as
        :class:`~linsep._core.linalg.PositiveDefiniteFactor` on the host.
        """
        lower = _cholesky(xp, matrix)
        if lower is not None:
            pivots = xp.abs(xp.linalg.diagonal(lower))
            finite, smallest = read_scalars(xp, [xp.all(xp.isfinite(lower)), xp.min(pivots)])
            if finite and smallest > 0:
                return cls(xp, "cholesky", lower=lower)
        lower = None  # a failed factor is not held while eigh works (both are N × N for the kernel LSVM)
        evals, evecs = xp.linalg.eigh(matrix)
        return cls(xp, "eigh", evecs=evecs, inverse_evals=1.0 / xp.clip(evals, min=floor))

    @classmethod
    def _spectral(cls, xp, system, scale, cut):
        evals, evecs = xp.linalg.eigh(system)
        keep = evals > xp.max(evals) * cut
        ones = xp.ones_like(evals)
        inverse = xp.where(keep, ones / xp.where(keep, evals, ones), xp.zeros_like(evals))  # Λ⁺: zero off the range
        return cls(xp, "eigh", evecs=evecs, inverse_evals=inverse, scale=scale)

    def solve(self, g):
        """``A⁻¹ g`` (``A⁺ g`` on the range) for ``g`` of shape ``(p,)`` or ``(p, K)`` on the device, float64."""
        xp = self.xp
        vector = g.ndim == 1
        h = xp.astype(g, self.dtype, copy=False)
        h = h[:, None] if vector else h
        if self._scale is not None:
            h = h * self._scale[:, None]
        if self.method == "cholesky":
            h = self._triangular(self._upper, self._triangular(self._lower, h, True), False)
        else:
            h = self._evecs @ ((self._evecs.T @ h) * self._inverse_evals[:, None])
        if self._scale is not None:
            h = h * self._scale[:, None]
        return xp.astype(h[:, 0] if vector else h, xp.float64, copy=False)




def triangular_solver(xp):
    """``solve(T, B, lower)``: ``T⁻¹ B`` for a triangular ``T`` in the namespace ``xp``, on its device.

    The array API's linalg extension has no triangular solve: PyTorch's
    ``torch.linalg.solve_triangular`` and CuPy's
    ``cupyx.scipy.linalg.solve_triangular`` are used where ``xp`` is theirs;
    any other namespace gets ``xp.linalg.solve`` with the triangular factor
    (a general solve: ``O(p³)`` a call where a triangular one is ``O(p²)``,
    still on the device and never an explicit inverse).
    """
    try:
        from sklearn.externals.array_api_compat import is_cupy_namespace, is_torch_namespace
    except ImportError:  # a scikit-learn that does not vendor it: the package itself
        from array_api_compat import is_cupy_namespace, is_torch_namespace

    if is_torch_namespace(xp):
        import torch

        return lambda T, B, lower: torch.linalg.solve_triangular(T, B, upper=not lower)
    if is_cupy_namespace(xp):
        from cupyx.scipy.linalg import solve_triangular

        return lambda T, B, lower: solve_triangular(T, B, lower=lower)
    return lambda T, B, lower: xp.linalg.solve(T, B)


def _cholesky(xp, matrix):
    """The lower Cholesky factor of ``matrix`` on the device, or ``None`` where the namespace refuses it.

    NumPy-based namespaces raise ``LinAlgError`` (a ``ValueError``), PyTorch
    a ``RuntimeError``; CuPy returns NaN entries instead, which the caller's
    finite check reads.
    """
    try:
        return xp.linalg.cholesky(matrix)
    except (ValueError, RuntimeError, ArithmeticError):
        return None


def _device(array):
    """The device of ``array`` (array-api-compat's ``device``: CuPy's and PyTorch's too, with or without dispatch)."""
    try:
        from sklearn.externals.array_api_compat import device
    except ImportError:  # a scikit-learn that does not vendor it: the package itself
        from array_api_compat import device
    return device(array)


class _DeviceLSVMStep(LinearStepping):
    """The LSVM update (22) on the device (:func:`linsep._core.lsvm_update.dual_update`'s steps in the namespace).

    ``α``, ``r`` and ``W`` stay on the device; each step reads its five
    numbers for the stopping rule in one copy, with the count of
    ``H W_k <= 0`` (:attr:`wrong`: a trace's training errors); :meth:`polish` brings the
    returned weights to the host (``p`` numbers, once).
    """

    solves_converged = True  # the direct factor always meets its tolerance

    def __init__(self, design, factor, mu):
        self.design, self.f, self.C, self.mu = design, factor, factor.C, mu
        xp = design.xp
        self._c = factor.linear_term  # c of f = ½αᵗQα − cᵗα: 1 (None), or √s for weighted rows
        self._r = design.constant_vector(1.0) if self._c is None else design.vector(self._c)
        self.alpha = None
        self._next_rhs = design.rmatvec(self._r)  # Hᵗ1
        self.weights = factor.solve(self._next_rhs)
        self._next = None
        statistics = self._pass()
        self.objective, wrong = read_scalars(xp, [statistics[2], self._wrong])
        self.wrong = int(wrong)

    def _pass(self):
        """α_k, r_k and g_k from W_k (``self.weights``); the next solve; the statistics as 0-d arrays.

        The count of ``H W_k <= 0`` (a trace's training errors, :attr:`wrong`)
        comes from the scores the update computes anyway, read with the
        statistics: a traced fit reads nothing more per iteration.
        """
        xp, design = self.design.xp, self.design
        scores = design.scores(self.weights)
        self._wrong = xp.sum(xp.astype(scores <= 0, xp.int64))
        alpha = self.C * (self._r - scores)  # α_k = C (r_{k−1} − H W_k)
        step_sq = xp.sum(alpha * alpha) if self.alpha is None else xp.sum((alpha - self.alpha) ** 2)
        alpha_sq = xp.sum(alpha * alpha)
        objective = 0.5 * xp.sum(alpha * self._r) - xp.sum(alpha if self._c is None else alpha * self._c)
        first = self.alpha is None
        step = self._r - self.mu * alpha
        # r_k = max(r_{k−1} − μ α_k, c)
        self._r = xp.clip(step, min=1.0) if self._c is None else xp.maximum(step, self._c)
        self.alpha = alpha
        self._next_rhs = design.rmatvec(self._r)  # g_k = Hᵗ r_k
        self._next = self.f.solve(self._next_rhs)
        return (xp.zeros_like(alpha_sq) if first else step_sq), alpha_sq, objective

    def __call__(self):
        xp = self.design.xp
        previous, self.weights = self.weights, self._next
        step_sq, alpha_sq, objective = self._pass()
        diff = self.weights - previous
        values = read_scalars(xp, [step_sq, alpha_sq, xp.sum(diff * diff), xp.sum(self.weights * self.weights),
                                   objective, self._wrong])
        self.objective, self.wrong = values[4], int(values[5])
        return tuple(values[:5])

    def polish(self):
        """The returned weights on the host (an explicit copy of ``p`` numbers); weighted, ``α = √s β``."""
        self.weights = to_host(self.weights, self.design.xp)
        if self._c is not None:
            self.alpha = self.alpha * self._c
