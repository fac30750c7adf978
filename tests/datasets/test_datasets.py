"""Bundled benchmark data and the seeded split generator."""

import numpy as np
import pytest

from linsep.datasets import BENCHMARKS, benchmark_splits, load_benchmark, split_indices


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_load_benchmark_shapes_and_labels(name):
    X, y = load_benchmark(name)
    info = BENCHMARKS[name]
    assert X.shape == (info.n_samples, info.n_features)
    assert set(np.unique(y)) == {-1, 1}
    assert np.isfinite(X).all()


def test_splits_have_protocol_sizes_and_are_standardized_with_training_statistics():
    info = BENCHMARKS["heart"]
    X_train, y_train, X_test, y_test = next(benchmark_splits("heart"))
    assert X_train.shape == (info.n_train, info.n_features) and X_test.shape[0] == info.n_test
    np.testing.assert_allclose(X_train.mean(axis=0), 0, atol=1e-12)
    assert not np.allclose(X_test.mean(axis=0), 0, atol=1e-6)


def test_split_realizations_are_disjoint_deterministic_and_independent_of_count():
    train, test = split_indices("thyroid", 3, random_state=0)
    assert not set(train) & set(test)
    again = split_indices("thyroid", 3, random_state=0)
    np.testing.assert_array_equal(train, again[0])
    assert not np.array_equal(train, split_indices("thyroid", 3, random_state=1)[0])
    first_five = list(benchmark_splits("thyroid", n_splits=5))
    first_two = list(benchmark_splits("thyroid", n_splits=2))
    np.testing.assert_array_equal(first_five[1][0], first_two[1][0])


def test_default_number_of_realizations():
    assert sum(1 for _ in benchmark_splits("splice")) == 20
    assert BENCHMARKS["titanic"].n_realizations == 100


def test_unknown_name():
    with pytest.raises(ValueError, match="unknown benchmark"):
        load_benchmark("iris")
