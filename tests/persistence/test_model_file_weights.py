"""Model files keep ``class_weight`` as given: "balanced", or a dict keyed by labels of any JSON type."""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import linsep
from linsep import HoKashyapClassifier, LagrangianSVMClassifier

X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [3.0, 3.0], [3.0, 4.0], [4.0, 3.0]])


@pytest.mark.parametrize("labels, class_weight", [
    ([0, 0, 0, 1, 1, 1], {0: 1.0, 1: 3.0}),
    (["a", "a", "a", "b", "b", "b"], {"a": 2.0, "b": 1.0}),
    ([0, 0, 0, 1, 1, 1], "balanced"),
])
@pytest.mark.parametrize("estimator", [HoKashyapClassifier, LagrangianSVMClassifier])
def test_class_weight_round_trip(tmp_path, estimator, labels, class_weight):
    y = np.array(labels)
    model = estimator(class_weight=class_weight).fit(X, y, sample_weight=np.arange(1.0, 7.0))
    linsep.save(model, tmp_path / "model.lsm")
    loaded = linsep.load(tmp_path / "model.lsm")
    assert loaded.get_params()["class_weight"] == class_weight
    if isinstance(class_weight, dict):  # int labels stay ints, not JSON's string keys
        assert [type(k) for k in loaded.class_weight] == [type(k) for k in class_weight]
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_class_weight_in_a_pipeline(tmp_path):
    y = np.array([0, 0, 0, 1, 1, 1])
    pipeline = make_pipeline(StandardScaler(), HoKashyapClassifier(class_weight={0: 1.0, 1: 3.0})).fit(X, y)
    linsep.save(pipeline, tmp_path / "pipeline.lsm")
    loaded = linsep.load(tmp_path / "pipeline.lsm")
    assert loaded[-1].class_weight == {0: 1.0, 1: 3.0}
    np.testing.assert_array_equal(loaded.predict(X), pipeline.predict(X))
