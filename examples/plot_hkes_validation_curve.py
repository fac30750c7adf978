"""
HKES: validation error along the iterations (Lauer & Bloch, Fig. 1)
===================================================================

Ho–Kashyap with early stopping (HKES) runs the plain HK iteration on the
training part of the data and measures, at every iteration ``k``, the error
``GE_k`` on a validation part; it keeps the weights of the first minimum of
``GE_k`` over all iterations, ``k̂`` (``best_iter_``).  This is the paper's
Figure 1 on the ``heart`` data set, split 0 of the validation protocol (2/3
of the training split for training, 1/3 for validation), drawn by
:func:`linsep.inspection.plot_validation_curve`.
"""

import matplotlib.pyplot as plt

from linsep import make_classifier
from linsep.experiments import load_split
from linsep.inspection import plot_validation_curve

X_fit, y_fit, X_val, y_val, X_test, y_test = load_split("heart", split=0)
hkes = make_classifier("hkes").fit(X_fit, y_fit, X_val=X_val, y_val=y_val)
print(f"{hkes.status_} after {hkes.n_iter_} iterations; kept k̂ = {hkes.best_iter_}")
print(f"test error of the kept weights: {100 * (1 - hkes.score(X_test, y_test)):.1f} %")

display = plot_validation_curve(hkes, n_train=len(y_fit))
display.ax_.set_title("HKES on heart, split 0: validation and training error")
display.figure_.tight_layout()

plt.show()
