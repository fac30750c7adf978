"""
Kernel methods on XOR and on two moons
======================================

No line separates XOR: linear Ho–Kashyap says so with a proof
(``status_ == "not_separable"``, the certificate ``u ≥ 0`` with
``Σ u_i y_i (x_i, 1) = 0``).  In the feature space of a quadratic or RBF
kernel the same points are separable, and every kernel estimator of linsep
finds a separating function.  On the two-moons data (noisy, overlapping) the
kernel estimators draw non-linear boundaries; the regularised kernel
Ho–Kashyap (``C > 0``, Łęski's kernel MHKS) and the kernel LSVM trade
training errors for smoothness.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning

from linsep import (HoKashyapClassifier, KernelHoKashyapClassifier, KernelLagrangianSVMClassifier,
                    KernelPerceptronClassifier, KernelSchlesingerKozinecClassifier)

X_xor = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
y_xor = np.array([1, 1, 0, 0])
linear = HoKashyapClassifier().fit(X_xor, y_xor)
u = linear.certificate_
print(f"linear HK on XOR: {linear.status_}, proof u / max(u) = {np.round(u / u.max(), 3)}")

X_moons, y_moons = make_moons(n_samples=120, noise=0.2, random_state=0)

models = {
    "kernel HK (RBF)": KernelHoKashyapClassifier(kernel="rbf", gamma=1.0),
    "kernel MHKS (RBF, C=1)": KernelHoKashyapClassifier(kernel="rbf", gamma=1.0, C=1.0),
    "kernel perceptron (poly 2)": KernelPerceptronClassifier(kernel="poly", degree=2, coef0=1.0, max_iter=200),
    "kernel SK (RBF)": KernelSchlesingerKozinecClassifier(kernel="rbf", gamma=1.0),
    "kernel LSVM (RBF, C=10)": KernelLagrangianSVMClassifier(kernel="rbf", gamma=1.0, C=10.0),
}


def boundary(ax, clf, X, y, title):
    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 150), np.linspace(lo[1], hi[1], 150))
    f = clf.decision_function(np.c_[gx.ravel(), gy.ravel()]).reshape(gx.shape)
    ax.contourf(gx, gy, f > 0, levels=[-0.5, 0.5, 1.5], colors=["C0", "C1"], alpha=0.2)
    ax.contour(gx, gy, f, levels=[0], colors="k", linewidths=1.2)
    ax.scatter(*X[y == 0].T, marker="o", s=20, color="C0", edgecolor="k", lw=0.5)
    ax.scatter(*X[y == 1].T, marker="s", s=20, color="C1", edgecolor="k", lw=0.5)
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


fig, axes = plt.subplots(2, len(models), figsize=(3.1 * len(models), 6.2))
for col, (name, model) in enumerate(models.items()):
    for row, (X, y, data) in enumerate(((X_xor, y_xor, "XOR"), (X_moons, y_moons, "moons"))):
        with warnings.catch_warnings():
            # The perceptron on the overlapping moons ends at max_iter (status_ says so in the title).
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = model.fit(X, y)
        errors = int(np.sum(clf.predict(X) != y))
        print(f"{name:28s} {data:6s} status {clf.status_!s:14s} training errors {errors}")
        boundary(axes[row, col], clf, X, y, f"{name}\n{data}: {clf.status_}, {errors} training errors")
fig.tight_layout()

plt.show()
