"""
Animated: the hyperplane of Ho–Kashyap and of the perceptron, iteration by iteration
====================================================================================

The same data as :ref:`sphx_glr_auto_examples_plot_hyperplane_evolution.py`,
as a film: each frame draws the line ``w·x + w_0 = 0`` of the current iterate
``a(k) = (w, w_0)``, read from ``history_["weights"]`` of a fit with
``record_history=True``.

*Left*, Ho–Kashyap: ``a(k) = Y⁺b(k)`` is the least-squares line for the
current margins; the two far points pull it at first, then HK raises the
margins of the points already on their side and the line turns steadily
until it separates the classes.  *Right*, the single-sample perceptron (one
frame per pass over the data): every mistake adds the sample to the weights,
so the line jumps, and it stops after the first pass without a mistake.

Run it as a script (``python examples/plot_animated_hyperplane.py``) to watch
the animation in a window; the documentation embeds it as an HTML animation.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation
from sklearn.datasets import make_blobs

from linsep import HoKashyapClassifier, PerceptronClassifier
from linsep.inspection import get_trace

X, y = make_blobs(n_samples=30, centers=[[0.0, 0.0], [3.0, 2.0]], cluster_std=0.8, random_state=3)
X, y = np.r_[X, [[9.0, -1.0], [10.0, 0.0]]], np.r_[y, 1, 1]   # two far points of class 1

hk = HoKashyapClassifier(b0=1.0, record_history=True).fit(X, y)
perceptron = PerceptronClassifier(record_history=True, shuffle=True, random_state=0).fit(X, y)
print(f"Ho–Kashyap: {hk.status_} after {hk.n_iter_} iterations; "
      f"perceptron: {perceptron.status_} after {perceptron.n_iter_} passes")

# %%
# Each trace holds one row ``[w_1, w_2, w_0]`` (bias last) per iterate and
# the iteration number ``k`` of each row.

runs = []
for name, model in [("Ho–Kashyap", hk), ("perceptron", perceptron)]:
    trace = get_trace(model)
    runs.append((name, trace["iteration"], trace["weights"]))
n_frames = max(len(iterations) for _, iterations, _ in runs)

pad = 1.0
x_range = np.array([X[:, 0].min() - pad, X[:, 0].max() + pad])
y_range = (X[:, 1].min() - pad, X[:, 1].max() + pad)

fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), sharey=True)
lines, labels = [], []
for ax, (name, _, _) in zip(axes, runs):
    for label, marker in zip((0, 1), ("o", "s")):
        ax.scatter(*X[y == label].T, marker=marker, s=22, edgecolor="k", linewidth=0.5)
    ax.set(xlim=x_range, ylim=y_range, title=name)
    lines.append(ax.plot([], [], color="k", lw=2)[0])
    labels.append(ax.text(0.03, 0.94, "", transform=ax.transAxes, va="top"))
fig.tight_layout()


def line_through(weights):
    """Two points of the line ``w·x + w_0 = 0`` across the plot (none for ``w = 0``)."""
    w1, w2, w0 = weights
    if w1 == w2 == 0:  # the perceptron's starting point a(0) = 0 has no line
        return [], []
    if abs(w2) > 1e-12 * abs(w1):
        return x_range, -(w0 + w1 * x_range) / w2
    return np.full(2, -w0 / w1), np.array(y_range)  # vertical


def draw(frame):
    """Draw each run's iterate number ``frame``, or its last one once it has stopped."""
    for line, label, (_, iterations, weights) in zip(lines, labels, runs):
        row = min(frame, len(iterations) - 1)
        line.set_data(*line_through(weights[row]))
        label.set_text(f"k = {iterations[row]}" + (" (stopped)" if row == len(iterations) - 1 else ""))
    return lines + labels


animation = FuncAnimation(fig, draw, frames=n_frames + 5, interval=400, blit=False)
plt.show()
