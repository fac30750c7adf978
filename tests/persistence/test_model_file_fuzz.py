"""Model-file mutations, CRC fixed or not: refused in one line or loaded with identical predictions.

A sample of the full product (every byte × :data:`MASKS`, with and without
the zip CRC fixed, every truncation) runs here: the bytes of each member's
``.npy`` header that hold its text, three masks, and every 37th byte
elsewhere.  ``benchmarks/fuzz_model_files.py`` runs the full product.
"""

import warnings

import numpy as np
import pytest
from model_file_mutations import member_spans, mutations, text_corpus

from linsep import make_classifier
from linsep.persistence.model_file import ModelFileError, load_model, parse_npy_header, save_model
from linsep.cli import main
from problems import overwrite

X_TRAIN = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 3.0], [4.0, 3.0], [3.0, 4.0]])
Y_TRAIN = np.array([0, 0, 0, 1, 1, 1])
X_TEST = np.random.default_rng(0).normal(2.0, 2.0, (40, 2))


def sampled_positions(data, stride=37):
    # magic, version, length and the dictionary text; the padding after it is spaces
    headers = {p for start, _, _, _ in member_spans(data) for p in range(start, min(start + 80, len(data)))}
    return sorted(headers | set(range(0, len(data), stride)))


@pytest.mark.parametrize("name", ["hk"])
def test_sampled_mutations_are_refused_or_harmless(tmp_path, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_classifier(name).fit(X_TRAIN, Y_TRAIN)
    path = tmp_path / "m.npz"
    save_model(model, name, path)
    good = path.read_bytes()
    predictions, outcomes = model.predict(X_TEST), {"refused": 0, "same": 0}
    for label, data in mutations(good, positions=sampled_positions(good), masks=(0x01, 0x20, 0xFF)):
        overwrite(path, data)
        try:
            loaded, _ = load_model(path)
        except ModelFileError as exc:
            assert "\n" not in str(exc), label
            outcomes["refused"] += 1
            continue
        assert np.array_equal(loaded.predict(X_TEST), predictions), label
        outcomes["same"] += 1
    assert outcomes["refused"] > 0 and outcomes["same"] > 0


def test_sampled_mutations_of_a_calibrated_text_pipeline(tmp_path):
    """A TfidfVectorizer and a CalibratedClassifierCV of MHKS: refused in one line, or the same probabilities."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    import linsep

    documents, labels = text_corpus(60, n_common=150, n_topic_words=10)
    test = text_corpus(20, n_common=150, n_topic_words=10, seed=1)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_pipeline(TfidfVectorizer(), CalibratedClassifierCV(make_classifier("mhks"), cv=2)).fit(
            documents, labels)
    path = linsep.save(model, tmp_path / "text.npz")
    good = path.read_bytes()
    probabilities, outcomes = model.predict_proba(test), {"refused": 0, "same": 0}
    spans = member_spans(good)
    positions = sorted({p for start, _, _, _ in spans[:3] for p in range(start, start + 80)}
                       | set(range(0, len(good), 53)))
    for label, data in mutations(good, positions=positions, masks=(0x01, 0xFF)):
        overwrite(path, data)
        try:
            loaded = linsep.load(path)
        except ModelFileError as exc:
            assert "\n" not in str(exc), label
            outcomes["refused"] += 1
            continue
        assert np.array_equal(loaded.predict_proba(test), probabilities), label
        outcomes["same"] += 1
    assert outcomes["refused"] > 0 and outcomes["same"] > 0


def test_crafted_npy_headers_are_refused_in_one_line(tmp_path, capsys):
    model = make_classifier("hk").fit(X_TRAIN, Y_TRAIN)
    path = tmp_path / "m.npz"
    save_model(model, "hk", path)
    good = path.read_bytes()
    data_file = tmp_path / "d.csv"
    data_file.write_text("a,b\n1,2\n3,4\n")
    start = member_spans(good)[1][0]  # classes_.npy: its header follows the 10-byte preamble
    for position in range(start + 10, start + 70):
        for label, data in mutations(good, positions=[position], masks=(0x01, 0x20, 0x7F)):
            overwrite(path, data)
            code = main(["predict", str(path), str(data_file)])
            _, err = capsys.readouterr()
            assert code in (0, 2), label
            if code == 2:
                assert len(err.splitlines()) == 1 and err.startswith("linsep predict: error: "), (label, err)


@pytest.mark.parametrize("header", [
    b"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
    b"{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
    b"{'descr': '<U3', 'fortran_order': True, 'shape': (2, 3), }",
])
def test_npy_header_parser_reads_what_numpy_writes(header):
    import io

    buffer = io.BytesIO()
    array = np.zeros(eval(header)["shape"], dtype=eval(header)["descr"])
    np.lib.format.write_array(buffer, np.asfortranarray(array) if b"True" in header else array)
    shape, fortran, dtype, offset = parse_npy_header(buffer.getvalue())
    assert (shape, fortran, dtype) == (array.shape, b"True" in header and array.ndim > 1, array.dtype)
    assert offset == len(buffer.getvalue()) - array.nbytes


@pytest.mark.parametrize("header", [
    b"{'descr': '<f8', 'fortran_order': False, 'shape': (2,, }",  # numpy: tokenize.TokenError
    b"{'descr': '<f8', 'fortran_order': False, 'shape': (2,) }",
    b"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",  # object arrays
    b"{'descr': '<i3', 'fortran_order': False, 'shape': (2,), }",
    b"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }",
    b"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\xff",
    b"{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }",
])
def test_npy_header_parser_refuses_every_other_header(header):
    header = header + b" " * (-(len(header) + 11) % 64) + b"\n"
    data = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(16)
    with pytest.raises(ValueError) as info:
        parse_npy_header(data)
    assert "\n" not in str(info.value)
