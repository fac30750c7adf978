"""linsep._version: the declared version, plus the git commit when linsep is imported from a checkout."""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import linsep
from linsep import _version

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "linsep" / "_version.py"


def test_local_part_names_the_commit_and_the_dirty_flag():
    state = {"commit": "0123456789abcdef" * 2 + "01234567", "short": "0123456789ab", "dirty": False}
    assert _version.version_of("0.1.0", state) == "0.1.0+g0123456789ab"
    assert _version.version_of("0.1.0", {**state, "dirty": True}) == "0.1.0+g0123456789ab.dirty"
    assert _version.version_of("0.1.0", None) == "0.1.0"


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_in_a_checkout_the_version_names_head():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    state = _version.git_state()
    assert state["commit"] == head and state["short"] == head[:12] and isinstance(state["dirty"], bool)
    assert linsep.__version__ == _version.version() == _version.version_of(_version.BASE_VERSION, state)
    assert linsep.__version__.startswith(f"{_version.BASE_VERSION}+g{head[:12]}")


def _copy_as_package(tmp_path, git_dir=True):
    """_version.py at src/linsep/ under a fresh root, beside a pyproject naming linsep."""
    package = tmp_path / "src" / "linsep"
    package.mkdir(parents=True)
    shutil.copy(SOURCE, package / "_version.py")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "linsep"\n')
    if git_dir:
        (tmp_path / ".git").mkdir()  # not a repository: git fails
    return package / "_version.py"


def _version_of_copy(path, env=None):
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('v', sys.argv[1]); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); print(m.__version__)")
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def test_outside_a_checkout_or_when_git_fails_the_version_is_the_declared_one(tmp_path):
    assert _version_of_copy(_copy_as_package(tmp_path / "installed", git_dir=False)) == _version.BASE_VERSION
    assert _version_of_copy(_copy_as_package(tmp_path / "broken")) == _version.BASE_VERSION  # git errors
    no_git = {**os.environ, "PATH": str(tmp_path)}  # no git on the PATH at all
    assert _version_of_copy(_copy_as_package(tmp_path / "nogit"), env=no_git) == _version.BASE_VERSION


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for git")
def test_importing_linsep_runs_no_git_and_reading_the_version_does(tmp_path):
    marker = tmp_path / "git-was-called"
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho called >> '{marker}'\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    code = ("import sys, os, linsep, linsep.cli, linsep.persistence, linsep.experiments; "
            "print(os.path.exists(sys.argv[1])); print(linsep.__version__)")
    out = subprocess.run([sys.executable, "-c", code, str(marker)], capture_output=True, text=True, check=True,
                         env=env, timeout=300).stdout.split()
    assert out[0] == "False"  # nothing ran git at import
    # then the version was asked for: git ran (in a checkout) and, failing, left the declared version
    assert out[1] == _version.BASE_VERSION
    assert marker.exists() == (ROOT / ".git").exists()


def test_pyproject_reads_the_declared_version():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in text and 'version = {attr = "linsep._version.BASE_VERSION"}' in text
