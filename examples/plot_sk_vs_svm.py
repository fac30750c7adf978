"""
Schlesinger–Kozinec: an ε-optimal margin, compared with the SVM
===============================================================

The Schlesinger–Kozinec algorithm (:class:`~linsep.SchlesingerKozinecClassifier`)
looks for the nearest points of the two classes' convex hulls; the bisector
of the segment joining them is the maximal-margin hyperplane (the hard-margin
SVM with an unpenalised bias).  It stops when the hyperplane is ε-optimal:
the margin ``margin_`` it reached is within ``tol · margin_upper_bound_`` of
the upper bound it also maintains, so the optimal margin lies between the
two numbers.

A linear SVC with a very large ``C`` solves the hard-margin problem exactly;
with ``tol = 0.1`` SK's line is close to it, with ``tol = 0.001`` it is on it.
The thin lines are each hyperplane's margin on either side.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs
from sklearn.svm import SVC

from linsep import SchlesingerKozinecClassifier

X, y = make_blobs(n_samples=60, centers=[[-2, -1], [2, 1]], cluster_std=1.0, random_state=2)
svm = SVC(kernel="linear", C=1e6).fit(X, y)
svm_margin = 1 / np.linalg.norm(svm.coef_)
print(f"SVM (C = 1e6): margin {svm_margin:.4f}")

fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
xs = np.linspace(X[:, 0].min() - 1, X[:, 0].max() + 1, 2)


def draw(ax, w, b, margin, **kw):
    ax.plot(xs, -(b + w[0] * xs) / w[1], **kw)
    shift = margin * np.linalg.norm(w)
    for s in (-1, 1):
        ax.plot(xs, -(b - s * shift + w[0] * xs) / w[1], lw=1, ls=kw.get("ls", "-"), alpha=0.6,
                color=kw["color"])


for ax, tol in zip(axes, (0.1, 0.001)):
    sk = SchlesingerKozinecClassifier(tol=tol).fit(X, y)
    print(f"SK tol = {tol}: margin {sk.margin_:.4f} <= optimum <= {sk.margin_upper_bound_:.4f} "
          f"({sk.n_iter_} steps)")
    ax.scatter(*X[y == 0].T, marker="o", edgecolor="k", label="class 0")
    ax.scatter(*X[y == 1].T, marker="s", edgecolor="k", label="class 1")
    sv = svm.support_vectors_
    ax.scatter(*sv.T, s=160, facecolor="none", edgecolor="k", label="SVM support vectors")
    draw(ax, svm.coef_[0], svm.intercept_[0], svm_margin, color="C2", lw=2, label=f"SVM, margin {svm_margin:.3f}")
    draw(ax, sk.coef_[0], sk.intercept_[0], sk.margin_, color="C3", lw=1.5, ls="--",
         label=f"SK, margin {sk.margin_:.3f} (bound {sk.margin_upper_bound_:.3f})")
    ax.set_title(f"SK with tol = {tol}: {sk.n_iter_} steps", fontsize=10)
    ax.set_xlabel("$x_1$")
    ax.set_xlim(-4, 3)
    ax.set_ylim(-3, 3)
    ax.set_aspect("equal")
    ax.legend(fontsize=7, loc="upper left")
axes[0].set_ylabel("$x_2$")
fig.tight_layout()

plt.show()
