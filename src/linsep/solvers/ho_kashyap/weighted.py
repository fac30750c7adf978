"""Ho–Kashyap on weighted rows: the sample-weighted criterion as the plain one on scaled rows.

Sample weights ``s_i`` enter Ho–Kashyap as scaled rows of ``Y``
(:mod:`linsep.designs.weights`): ``√s_i y_i`` for the squared criterion,
``s_i y_i`` for the absolute one, with the margin vector scaled alike, so the
weighted criterion ``Σ s_i (y_iᵀW − b_i)²`` is the plain one on the scaled rows.

Ho–Kashyap (Lauer & Bloch 2006, eqs. 6–14) with weights minimises
:math:`\\sum_i s_i (y_i^t W - 1_C - b_i)^2 \\; (+ \\, C w^t w)`, :math:`1_C` the
MHKS/MHKA margin of one: on rows scaled by :math:`r = \\sqrt{s}` and the margin
:math:`\\tilde B = r (B + o) - o` (:math:`o` the offset) every iterate
:math:`W_k`, :math:`B_k` and :math:`E_k` is the weighted one
(:math:`\\tilde E = r E`, :math:`\\tilde B_{k+1} + o = r (B_{k+1} + o)`), and the
stopping rules read the same (:math:`\\tilde J` is the weighted :math:`J`;
:math:`|\\tilde E| \\le \\mathit{tol} \\, (\\tilde B + o)` is
:math:`|E| \\le \\mathit{tol} \\, (B + o)`).  The IRLS variants (MHKA, HKESA)
minimise ``Σ s_i |e_i|`` with ``D = diag(s_i/|e_i|)``: on rows scaled by
``r = s`` the solver's own ``D̃ = 1/|ẽ_i| = 1/(s_i|e_i|)`` gives ``ỸᵗD̃Ỹ =
Yᵗ diag(s/|e|) Y``, the weighted system; their first iterate ``W_0`` (before
any reweighting) is the ``s``-weighted least-squares solution, computed here
and passed as the starting weights.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from linsep.designs.memory import as_design
from linsep.designs.weights import weighted_signed_design
from linsep.solvers.ho_kashyap.solver import ho_kashyap

__all__ = ["scaled_ho_kashyap", "weighted_ho_kashyap"]


def weighted_ho_kashyap(X, y, rows, sample_weight, params, *, initial_weights=None, **options):
    """Ho–Kashyap (every variant of ``params``) minimising the ``sample_weight``-weighted criterion.

    ``X`` and the ``±1`` labels ``y`` of the rows ``rows`` of ``X`` (all rows
    for ``None``) with their positive weights: :func:`scaled_ho_kashyap` on
    the in-memory designs of the scaled rows.  ``options`` go to
    :func:`ho_kashyap` as they are (``Y_val``, ``trace``, ``plan``).
    """
    s = np.asarray(sample_weight, dtype=float)
    return scaled_ho_kashyap(lambda power: weighted_signed_design(X, y, s, power, rows), s, params,
                             initial_weights=initial_weights, **options)


def scaled_ho_kashyap(design_of, s, params, *, initial_weights=None, **options):
    """:func:`ho_kashyap` on the scaled rows of the module docstring, its certificate and margin mapped back.

    ``design_of(power)`` is the design of the rows ``s_i^power y_i`` (power
    ``0.5`` or ``1``) and ``s`` the positive weights of its rows: a NumPy
    array (in memory) or a dask array chunked like the design's row blocks
    (:mod:`linsep.designs.dask_data`); the scaled starting margin, the IRLS variants'
    starting weights and the mapping back are the same expressions on
    either.  ``options`` go to :func:`ho_kashyap` as they are.
    """
    absolute = params["loss"] == "absolute"
    offset = 0.0 if params["C"] is None else 1.0
    scale = s if absolute else s ** 0.5  # (a power, not np.sqrt: s may be an array of any namespace, on a device)
    initial_margin = scale * (params["b0"] + offset) - offset
    if absolute and initial_weights is None:
        # W_0 = (YᵗSY + CĨ)⁻¹ YᵗS (b_0 + offset): the weighted least squares on the rows √s y_i.
        design = as_design(design_of(0.5))
        solver = design.least_squares_solver(0.0 if params["C"] is None else float(params["C"]))
        initial_weights = design.solve_target(solver, design.vector(s ** 0.5 * (params["b0"] + offset)), 0.0)
    result = ho_kashyap(design_of(1 if absolute else 0.5), **params, initial_margin=initial_margin,
                        initial_weights=initial_weights, **options)
    margin = None if result.margin is None else (result.margin + offset) / scale - offset
    certificate = None if result.certificate is None else result.certificate * scale
    return replace(result, margin=margin, certificate=certificate)
