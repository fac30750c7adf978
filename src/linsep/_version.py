"""The package version, in a module of its own: the model files, composite model files and the experiment
records name it, and those modules import it from here (importing it from the package, which imports them,
would be a cycle).

:data:`BASE_VERSION` is the declared release (``pyproject.toml`` reads it from here, CITATION.cff repeats it).
When linsep is imported from a git checkout of its own repository, :func:`version` appends the commit as a
PEP 440 local part, as setuptools-scm would: ``0.1.0+g1a2b3c4d5e6f`` for a clean tree, ``0.1.0+g1a2b3c4d5e6f.dirty``
when tracked files differ from that commit.  Installed from a wheel or an sdist, or where ``git`` is missing or
fails, it is :data:`BASE_VERSION` alone.  ``git`` runs once per process, the first time the version is asked
for (``linsep.__version__``, ``linsep --version``, a model file or a benchmark record), never at import.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

BASE_VERSION = "0.1.0"
"""The declared version, without the commit."""

GIT_TIMEOUT_S = 10
"""How long one ``git`` call may take before the commit is given up (a hung network file system, say)."""


def _checkout_root():
    """The repository root above this file when it is linsep's own checkout (``src/linsep/_version.py``), else None.

    A wheel installed into a virtual environment that lies inside some other repository must not take that
    repository's commit: the root must hold ``.git`` (a folder, or a file for a worktree) and a
    ``pyproject.toml`` naming linsep.
    """
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "linsep"' in pyproject else None


def _git(root, *args):
    # a read never takes git's index lock; the ceiling keeps git from taking a repository above the root
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_CEILING_DIRECTORIES": str(Path(root).parent)}
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                          env=env, check=True).stdout.strip()


@functools.lru_cache(maxsize=1)
def git_state():
    """The commit and dirty flag of the checkout linsep is imported from.

    Returns
    -------
    dict or None
        ``{"commit": <40 hex>, "short": <12 hex>, "dirty": bool}``; ``dirty`` is true when a tracked file
        differs from the commit (untracked files do not count, as for ``git describe --dirty``).  None when
        linsep is not imported from a git checkout of its repository, or ``git`` is missing or fails.

    Examples
    --------
    >>> from linsep._version import git_state
    >>> state = git_state()
    >>> state is None or (len(state["commit"]) == 40 and isinstance(state["dirty"], bool))
    True
    """
    root = _checkout_root()
    if root is None:
        return None
    try:
        commit = _git(root, "rev-parse", "--verify", "HEAD")
        changes = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    if len(commit) != 40:
        return None
    return {"commit": commit, "short": commit[:12], "dirty": bool(changes)}


def version_of(base, state):
    """``base`` with the PEP 440 local part of a git state: ``+g<short>`` and ``.dirty`` if the tree is dirty.

    Parameters
    ----------
    base : str
        The declared version.
    state : dict or None
        :func:`git_state`'s answer; None gives ``base`` unchanged.

    Returns
    -------
    str

    Examples
    --------
    >>> from linsep._version import version_of
    >>> version_of("0.1.0", {"commit": "a" * 40, "short": "a" * 12, "dirty": True})
    '0.1.0+gaaaaaaaaaaaa.dirty'
    >>> version_of("0.1.0", None)
    '0.1.0'
    """
    if not state:
        return base
    return f"{base}+g{state['short']}" + (".dirty" if state["dirty"] else "")


def version():
    """linsep's version: :data:`BASE_VERSION`, plus the commit when imported from a git checkout.

    Returns
    -------
    str
        E.g. ``"0.1.0"`` (installed) or ``"0.1.0+g1a2b3c4d5e6f.dirty"`` (a checkout with local changes).
    """
    return version_of(BASE_VERSION, git_state())


def __getattr__(name):
    # PEP 562: ``__version__`` is computed when first read, so importing linsep never runs git.
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
