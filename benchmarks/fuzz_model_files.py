"""Full model-file fuzz: every byte × every mask (CRC fixed and not) and every truncation, on four model files.

Prints, per model, how many mutations were refused in one line, loaded with
identical predictions, or neither (a failure), and the time taken.  The test
suite (``tests/persistence/test_model_file_fuzz.py``) runs a sample of the same product.

    PYTHONPATH=src python benchmarks/fuzz_model_files.py
"""

import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import linsep
from linsep import make_classifier
from linsep.persistence.model_file import ModelFileError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from model_file_mutations import mutations

X_TRAIN = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 3.0], [4.0, 3.0], [3.0, 4.0]])
Y_TRAIN = np.array([0, 0, 0, 1, 1, 1])
X_TEST = np.random.default_rng(0).normal(2.0, 2.0, (40, 2))


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.npz"
        for name, n_classes in (("hk", 2), ("kernel_perceptron", 2), ("mse", 3), ("scaler+hk pipeline", 2)):
            X, y = (X_TRAIN, Y_TRAIN) if n_classes == 2 else \
                (np.vstack([X_TRAIN, X_TRAIN + [6.0, 0.0]]), np.r_[Y_TRAIN, np.full(6, 2)])
            model = make_pipeline(StandardScaler(), make_classifier("hk")) if "pipeline" in name else \
                make_classifier(name)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y)
            linsep.save(model, path)
            good, predictions = path.read_bytes(), model.predict(X_TEST)
            outcomes, start = Counter(), time.perf_counter()
            for label, data in mutations(good):
                path.write_bytes(data)
                try:
                    loaded = linsep.load(path)
                except ModelFileError as exc:
                    outcomes["refused" if "\n" not in str(exc) else "FAILED (multi-line)"] += 1
                    continue
                except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
                    outcomes[f"FAILED ({type(exc).__module__}.{type(exc).__name__})"] += 1
                    continue
                outcomes["same" if np.array_equal(loaded.predict(X_TEST), predictions) else "FAILED (different)"] += 1
            failures += sum(v for k, v in outcomes.items() if k.startswith("FAILED"))
            print(f"{name} ({n_classes} classes, {len(good)} bytes): {sum(outcomes.values())} mutations in "
                  f"{time.perf_counter() - start:.1f} s: {dict(outcomes)}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
