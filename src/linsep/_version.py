"""The package version, in a module of its own: the model files, composite model files and the experiment
cache record it, and those modules import it from here at the top (importing it from the package, which
imports them, would be a cycle)."""

__version__ = "0.1.0"
