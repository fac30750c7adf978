"""The command line as a tool: python -m linsep, closed pipes, --plot file names, separable --json."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris

from linsep._core.certificates import decision_scores, is_proof, separates
from linsep.cli import main

SRC = Path(__file__).resolve().parents[1] / "src"
ENV = {**os.environ, "PYTHONPATH": str(SRC)}


def test_python_dash_m_linsep():
    done = subprocess.run([sys.executable, "-m", "linsep", "list"], capture_output=True, text=True, env=ENV, check=False,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.split()[0] == "batch_perceptron" and not done.stderr


def test_closed_pipe_exits_quietly():
    """The reader goes away before linsep writes (``linsep list | head -1`` at its worst): status 0, no message."""
    code = "import time; time.sleep(0.3); from linsep.cli import main; raise SystemExit(main(['list']))"
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    process.stdout.close()
    err = process.stderr.read()
    assert process.wait(timeout=120) == 0 and err == b""


@pytest.fixture
def lecture(tmp_path):
    path = tmp_path / "lecture.csv"
    path.write_text("x1,x2,class\n1,2,A\n2,0,A\n3,1,A\n-1,-1,B\n0,-2,B\n-2,1,B\n")
    return path


def test_plot_into_a_directory_is_refused_before_any_work(tmp_path, lecture, capsys):
    assert main(["trace", "perceptron", str(lecture), "--plot", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert "is a directory" in err and not out


def test_plot_without_extension_says_the_file_it_writes(tmp_path, lecture, capsys):
    pytest.importorskip("matplotlib")
    assert main(["trace", "perceptron", str(lecture), "--plot", str(tmp_path / "figure")]) == 0
    assert f"plot -> {tmp_path / 'figure.png'}" in capsys.readouterr().out
    assert (tmp_path / "figure.png").read_bytes().startswith(b"\x89PNG")
    assert main(["trace", "perceptron", str(lecture), "--plot", str(tmp_path / "figure.nope")]) == 2
    assert "unknown image format" in capsys.readouterr().err and not (tmp_path / "figure.nope").exists()


@pytest.fixture
def iris_csv(tmp_path):
    data = load_iris()
    path = tmp_path / "iris.csv"
    names = np.array(["setosa", "versicolor", "virginica"])
    path.write_text("a,b,c,d,species\n" + "".join(",".join(map(str, row)) + f",{names[t]}\n"
                                                  for row, t in zip(data.data, data.target)))
    return path, data.data, names[data.target]


def test_separable_prints_one_verdict_per_class(iris_csv, capsys):
    path, _, _ = iris_csv
    assert main(["separable", str(path), "--pairwise"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "not separable (every class against the rest)"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "setosa vs rest", "versicolor vs rest", "virginica vs rest",
        "setosa vs versicolor", "setosa vs virginica", "versicolor vs virginica"]


def test_separable_json_certificates_verify(iris_csv, capsys):
    path, X, y = iris_csv
    assert main(["separable", str(path), "--json", "--pairwise"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["classes"] == ["setosa", "versicolor", "virginica"]
    for problem in result["one_vs_rest"] + result["pairwise"]:
        rows = np.arange(len(y)) if problem["negative"] == "rest" else \
            np.flatnonzero((y == problem["negative"]) | (y == problem["positive"]))
        signs = np.where(y == problem["positive"], 1, -1)
        certificate = problem["certificate"]
        if problem["status"] == "separable":
            scores = decision_scores(X[rows], np.array(certificate["coef"]), certificate["intercept"]).ravel()
            assert separates(scores, signs[rows])
        else:
            assert problem["status"] == "not_separable" and len(certificate["rows"]) <= X.shape[1] + 2
            assert set(certificate["rows"]) <= set(rows)
            u = np.zeros(len(y))
            u[certificate["rows"]] = certificate["u"]
            assert is_proof(X, signs, u)


def test_separable_json_for_two_classes(tmp_path, capsys):
    path = tmp_path / "xor.csv"
    path.write_text("a,b,y\n0,0,p\n1,1,p\n0,1,q\n1,0,q\n")
    assert main(["separable", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "not_separable" and result["certificate"]["rows"] == [0, 1, 2, 3]
