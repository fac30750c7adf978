"""Compiling ahead of time (:mod:`linsep.warmup`, ``linsep warm-up``): a later process compiles nothing."""

import json
import os
import subprocess
import sys

import pytest

from linsep.warmup import SCOPES, warm_up_steps

_FIT_AFTER_WARM_UP = """
import json
import numpy as np
from linsep import make_classifier
from linsep.solvers.ho_kashyap import loops as _loops
from linsep.solvers.lsvm import loops as _lsvm_loops
from linsep.datasets import load_benchmark
X, y = load_benchmark("heart")
for name in ("hk", "mhka", "lsvm"):
    make_classifier(name).fit(X[:170], y[:170])
stats = [_loops.ho_kashyap_segment.stats, _lsvm_loops.lsvm_pass.stats]
print(json.dumps({"hits": sum(sum(s.cache_hits.values()) for s in stats),
                  "misses": sum(sum(s.cache_misses.values()) for s in stats)}))
"""


def test_bench_warm_up_leaves_nothing_to_compile(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    # two processes side by side, writing into the one empty cache (`make test` warms up so)
    done = subprocess.run([sys.executable, "-m", "linsep", "warm-up", "--bench", "--jobs", "2", "--no-progress"],
                          env=env, check=True, capture_output=True, text=True)
    assert "compiled code ready" in done.stdout and str(tmp_path) in done.stdout
    out = subprocess.run([sys.executable, "-c", _FIT_AFTER_WARM_UP], env=env, check=True, capture_output=True,
                         text=True)
    counts = json.loads(out.stdout.splitlines()[-1])
    assert counts == {"hits": 3, "misses": 0}  # HK, MHKA (IRLS) and the LSVM pass loaded from the disk cache
    assert "linsep: compiling" not in out.stderr
    # --clean: linsep's entries deleted first (the way out of a cache gone bad), then compiled anew, in this one
    # process (the default)
    again = subprocess.run([sys.executable, "-m", "linsep", "warm-up", "--bench", "--clean", "--no-progress"],
                           env=env, check=True, capture_output=True, text=True)
    removed = int(again.stdout.split("removed ")[1].split()[0])
    assert removed >= 6 and "compiled code ready" in again.stdout  # at least the three indexes and their code
    out = subprocess.run([sys.executable, "-c", _FIT_AFTER_WARM_UP], env=env, check=True, capture_output=True,
                         text=True)
    assert json.loads(out.stdout.splitlines()[-1]) == {"hits": 3, "misses": 0}


def test_warm_up_covers_every_layout_and_type():
    steps = [description for description, _ in warm_up_steps(parallel=True)]
    for part in ("by columns", "by rows", "by rows, chunked", "by rows, threads"):
        for loss in ("squared", "absolute"):
            assert f"Ho–Kashyap {part}, {loss} errors, float64" in steps
            if part != "by columns":
                assert f"Ho–Kashyap {part}, {loss} errors, float32" in steps
    assert "LSVM pass, float32, threads" in steps and "perceptron, sparse float32" in steps
    assert "Ho–Kashyap CV, a wave's runs in lockstep, float32" in steps
    assert not [step for step in warm_up_steps(parallel=False) if "threads" in step[0]]
    assert len(warm_up_steps("bench")) == 3 and SCOPES == ("all", "bench")
    with pytest.raises(ValueError, match="scope"):
        warm_up_steps("some")


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_warm_up_refuses_a_number_of_jobs_that_is_not_a_positive_integer(jobs):
    from linsep.warmup import warm_up

    with pytest.raises(ValueError, match="jobs must be a positive integer"):
        warm_up(progress=False, jobs=jobs)


def test_the_command_line_refuses_zero_jobs_before_any_work(capsys):
    from linsep.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["warm-up", "--jobs", "0"])
    assert stopped.value.code == 2 and "--jobs: expected a positive integer, got '0'" in capsys.readouterr().err
