"""Thin scikit-learn estimators over :mod:`linsep.solvers`."""

from .ho_kashyap import HoKashyapClassifier

__all__ = ["HoKashyapClassifier"]
