"""How a Ho–Kashyap solve runs: :class:`HKPlan`, the ``plan`` argument of :func:`~linsep.solvers.ho_kashyap.ho_kashyap`.

A plan forces a path or hands over work already done; it never changes what is solved (``plan=None``: every choice
made from the data).  It is a documented keyword, not a private hook: no function of linsep takes a private
(underscore) parameter (``tests/cross_cutting/test_layout.py``).  Tests and benchmarks force
paths with it (``ho_kashyap(Y, plan=HKPlan(driver="python"))``, or a mapping of its fields), the estimators hand
over shared work (the first W-steps of one-vs-rest problems, a cross-validation's reference error and lockstep).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable

from linsep.designs.memory import BY_COLUMNS_MAX_ENTRIES

__all__ = ["DRIVERS", "HKPlan"]

DRIVERS = ("auto", "compiled", "python")
"""Values of :attr:`HKPlan.driver`: the compiled segment where it applies and pays (``"auto"``: see
``solver.COMPILED_MIN_ENTRIES`` and ``solver.COMPILED_IRLS_MAX_COLUMNS``), wherever it applies, or the Python driver."""


@dataclass(frozen=True)
class HKPlan:
    """The execution plan of a Ho–Kashyap solve: the path it takes and the shared work it is handed.

    Tests and benchmarks force paths with it, the estimators hand over shared work; every field's default is
    the choice :func:`~linsep.solvers.ho_kashyap.ho_kashyap` makes from the data.

    Attributes
    ----------
    driver : {"auto", "compiled", "python"}
        :data:`DRIVERS`.  The path that ran is recorded in ``SolveResult.extra["plan"]``.
    by_columns_max_entries : int
        Up to this many entries a view is formed and swept by columns (``designs.memory.BY_COLUMNS_MAX_ENTRIES``).
    segment_steps : int or None
        Iterations per compiled segment (``None``: ``segments.SEGMENT_STEPS``).
    threads : int or None
        Threads of a compiled pass by rows (``None``: ``linsep._core.threads.pass_threads``).
    pivot_tol : float or None
        The IRLS Cholesky pivot test of the compiled segment (``None``: the factorisation's own).
    cg_forcing : float or None
        The inexact W-steps of wide ``Y`` (``linsep._core.linalg.iteration_forcing``; ``0``: every solve to
        :math:`\\tau`).
    segment, blas_limit : callable or None
        The compiled segment called and the BLAS limit of its IRLS pass (``None``: the module's own; tests pass
        wrappers that observe them, ``segments.iterate_compiled``).
    polish : bool
        ``False``: the weights of a run with inexact W-steps are returned as the iterations left them, not
        re-solved to :math:`\\tau` (a cross-validation fold, of which only the validation curve is read).
    singular : {None, "eigh"}
        ``"eigh"``: a singular system without ``C`` is factored from its Gram matrix
        (``linsep._core.linalg.LeastSquaresFactor``'s ``singular``) instead of the QR and SVD of a dense float64
        copy of ``Y``; in-memory designs only; an eigh factor then runs in the compiled loop under
        ``driver="auto"``, which otherwise leaves it to the Python driver.
    first_weights : ndarray of shape (p,) or None
        :math:`W_1` already solved to :math:`\\tau` on the iterative path, with the first W-steps of the other
        one-vs-rest problems of a fit, which share :math:`Y^t Y` (``solver.shared_first_weights``); the run goes
        on from it (``extra["plan"]["first_solve"]`` is ``"shared"``).  Ignored on the direct path and with
        ``initial_weights``.
    first_image : ndarray of shape (p,) or None
        :math:`Y^t \\mathbf{1}` of the run's rows, known to the caller (``HoKashyapClassifierCV``'s runs on views of
        large ``X``: one pass over ``X`` gives it for every fold): on the direct path (Cholesky or eigh factor,
        unweighted) :math:`W_1 = (Y^t Y + C \\tilde I)^{-1} (b_0 + \\mathit{offset}) Y^t \\mathbf{1}` without a pass
        over ``Y`` of its own (``extra["plan"]["first_solve"]`` is ``"image"``).  Ignored with ``initial_weights``
        or ``initial_margin``, and on the iterative and SVD paths.
    validation_reference : float or None
        ``HoKashyapClassifierCV``'s ``early_exit``: with ``Y_val``, an error fraction another run reached on the
        same validation rows.  Only an error below it (and below the run's own best) resets the patience
        (``rules.validation_improved``), so a run that never comes below it stops after ``n_iter_no_change``
        iterates.  ``None``: no reference.
    lockstep : tuple or None
        ``HoKashyapClassifierCV``'s waves on views of large float32 ``X``: ``(lockstep, fold)``, a
        ``segments.Lockstep`` and the fold whose training and validation rows ``Y`` and ``Y_val`` are.  A run
        the compiled segment would iterate by rows is set up and left to it: the result is then a ticket,
        replaced by the run's result in ``lockstep.results`` (the same result, bit for bit).
    """

    driver: str = "auto"
    by_columns_max_entries: int = BY_COLUMNS_MAX_ENTRIES
    segment_steps: int | None = None
    threads: int | None = None
    pivot_tol: float | None = None
    cg_forcing: float | None = None
    segment: Callable | None = None
    blas_limit: Callable | None = None
    polish: bool = True
    singular: str | None = None
    first_weights: Any = None
    first_image: Any = None
    validation_reference: float | None = None
    lockstep: tuple | None = None

    def __post_init__(self):
        if self.driver not in DRIVERS:
            raise ValueError(f"HKPlan.driver must be one of {DRIVERS}, got {self.driver!r}")

    @classmethod
    def of(cls, plan=None, **changes):
        """``plan`` (an :class:`HKPlan`, a mapping of its fields, or ``None``) as an :class:`HKPlan`, with ``changes``."""
        if plan is None:
            plan = cls()
        elif not isinstance(plan, HKPlan):
            unknown = set(plan) - {f.name for f in fields(cls)}
            if unknown:
                raise ValueError(f"unknown HKPlan fields {sorted(unknown)}")
            plan = cls(**plan)
        return replace(plan, **changes) if changes else plan
