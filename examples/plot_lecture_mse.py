"""
MSE on the lecture's four points, with three margin vectors
===========================================================

The minimum-squared-error procedure replaces the inequalities ``Y a > 0`` by
the equations ``Y a = b`` and solves them in the least-squares sense,
``a = Y⁺ b`` (:mod:`linsep.solvers.mse`).  The lecture works three cases:

1. the four points ``(6, 9), (5, 7)`` (class 1) and ``(5, 9), (0, 4)``
   (class 2) with ``b = 1``: ``a ≈ (2.7, 1.0, −0.9)`` separates them;
2. the last point moved to ``(0, 10)``, still ``b = 1``: least squares
   gives ``a ≈ (3.2, 0.2, −0.4)``, which puts ``(5, 9)`` on the wrong side
   although the data are separable;
3. the same data with ``b = (1, 1, 1, 10)``: asking for a larger margin on
   the far point lets the others count more, and ``a ≈ (−1.1, 1.7, −0.9)``
   separates again.

The lecture writes ``a = (a_0, a_1, a_2)`` with the bias first; linsep keeps
``intercept_`` and ``coef_`` apart.
"""

import matplotlib.pyplot as plt
import numpy as np

from linsep import MSEClassifier

y = np.array([1, 1, 2, 2])
X_first = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 4.0]])
X_moved = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
cases = [
    ("b = (1, 1, 1, 1)", X_first, None),
    ("(0, 4) moved to (0, 10), b = (1, 1, 1, 1)", X_moved, None),
    ("(0, 10), b = (1, 1, 1, 10)", X_moved, [1.0, 1.0, 1.0, 10.0]),
]

fig, axes = plt.subplots(1, 3, figsize=(12, 4), sharex=True, sharey=True)
for ax, (title, X, margin) in zip(axes, cases):
    clf = MSEClassifier().fit(X, y, margin=margin)
    # linsep's positive class is classes_[1] = 2; the lecture's is class 1, so flip the signs.
    a = -np.r_[clf.intercept_, clf.coef_.ravel()]
    Ya = np.where(y == 1, 1, -1) * (X @ a[1:] + a[0])
    print(f"{title:45s} a = {np.round(a, 2)}  Ya = {np.round(Ya, 2)}  -> {clf.status_}")

    for label, marker in ((1, "o"), (2, "s")):
        sel = y == label
        ax.scatter(*X[sel].T, marker=marker, s=60, edgecolor="k", label=f"class {label}", zorder=3)
    wrong = Ya <= 0
    ax.scatter(*X[wrong].T, s=300, facecolor="none", edgecolor="C3", lw=2, label="wrong side")
    xs = np.array([-1.0, 8.0])
    ax.plot(xs, -(a[0] + a[1] * xs) / a[2], "k-", lw=1.5, label="a·(1, x) = 0")
    ax.set_xlim(-1, 8)
    ax.set_ylim(2, 12)
    ax.set_title(f"{title}\na = ({', '.join(f'{v:.1f}' for v in a)}): {clf.status_}", fontsize=9)
    ax.set_xlabel("$x_1$")
axes[0].set_ylabel("$x_2$")
axes[0].legend(fontsize=8, loc="lower right")
fig.tight_layout()

plt.show()
