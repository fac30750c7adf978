"""Every mutation of a model file: single-byte flips (with and without the zip CRC fixed) and truncations,
and edits of its metadata with a valid checksum (:func:`rewrite_model_file`).

Shared by ``tests/persistence/test_model_file_fuzz.py`` (a sample), ``tests/persistence/test_persistence.py`` and
``tests/cross_cutting/test_adversarial.py`` (tampered files) and ``benchmarks/fuzz_model_files.py`` (the full product).
"""

import io
import json
import struct
import zipfile
import zlib

import numpy as np

from linsep.persistence.model_file import checksum

MASKS = (0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF)


def member_spans(data):
    """``[(start, end, local_crc_offset, central_crc_offset)]`` of each member's stored bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
        position = archive.start_dir
    spans = []
    for member in members:
        # Central directory entry: 46 fixed bytes, then name, extra and comment.
        assert data[position:position + 4] == b"PK\x01\x02"
        name_len, extra_len, comment_len = struct.unpack("<HHH", data[position + 28:position + 34])
        central_crc = position + 16
        position += 46 + name_len + extra_len + comment_len
        local = member.header_offset
        local_name_len, local_extra_len = struct.unpack("<HH", data[local + 26:local + 30])
        start = local + 30 + local_name_len + local_extra_len
        spans.append((start, start + member.compress_size, local + 14, central_crc))
    return spans


def flipped(data, position, mask, spans=None, fix_crc=False):
    """``data`` with one byte XOR ``mask``; with ``fix_crc``, the CRC of the member holding it recomputed."""
    damaged = bytearray(data)
    damaged[position] ^= mask
    if fix_crc:
        for start, end, local_crc, central_crc in spans:
            if start <= position < end:
                crc = struct.pack("<I", zlib.crc32(bytes(damaged[start:end])))
                damaged[local_crc:local_crc + 4] = crc
                damaged[central_crc:central_crc + 4] = crc
    return bytes(damaged)


def mutations(data, positions=None, masks=MASKS):
    """``(label, bytes)`` of every flip (CRC fixed where the byte is a member's), then every truncation."""
    spans = member_spans(data)
    in_member = [any(s <= p < e for s, e, _, _ in spans) for p in range(len(data))]
    for position in range(len(data)) if positions is None else positions:
        for mask in masks:
            yield f"flip {position} ^ {mask:#04x}", flipped(data, position, mask)
            if in_member[position]:
                yield f"flip {position} ^ {mask:#04x}, CRC fixed", flipped(data, position, mask, spans, True)
    for length in range(len(data)) if positions is None else sorted({p for p in positions if p < len(data)}):
        yield f"truncated to {length}", data[:length]


def rewrite_model_file(path, edit):
    """Apply ``edit(meta, arrays)`` to the model file at ``path`` and write it back with a valid checksum."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    meta = json.loads(arrays.pop("__meta__").tobytes())
    meta.pop("checksum")
    edit(meta, arrays)
    meta["checksum"] = checksum(meta, arrays)
    with open(path, "wb") as handle:
        np.savez(handle, __meta__=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)


# ---------------------------------------------------------------- text pipelines: documents and node edits

def text_corpus(n_documents=300, n_topics=3, n_common=2000, n_topic_words=60, seed=0):
    """``(documents, labels)``: a small multi-class text problem with a Zipf common vocabulary.

    Each document draws 20–60 words from ``n_common`` common words with
    probability ∝ 1/rank, plus about one word in eight from its topic's own
    ``n_topic_words`` (and one in forty from the next topic's); some words
    carry accents and capitals, so that the analyzers' options matter.
    """
    rng = np.random.default_rng(seed)
    common = np.array([f"w{i}" + ("é" if i % 7 == 0 else "") for i in range(n_common)])
    law = 1.0 / np.arange(1, n_common + 1)
    law /= law.sum()
    names = np.array(["sport", "tech", "arts", "food", "travel", "music", "law", "health"])[:n_topics]
    topics = [np.array([f"{name[:2].upper()}{i}" for i in range(n_topic_words)]) for name in names]
    documents, labels = [], []
    for j in range(n_documents):
        k = j % n_topics
        length = int(rng.integers(20, 61))
        words = list(rng.choice(common, length, p=law))
        words += list(rng.choice(topics[k], max(1, length // 8)))
        words += list(rng.choice(topics[(k + 1) % n_topics], max(1, length // 40)))
        rng.shuffle(words)
        documents.append(" ".join(words))
        labels.append(names[k])
    return documents, np.array(labels)


def find_nodes(tree, predicate, path=()):
    """The paths (tuples of keys and indices) of every node of ``tree`` (a JSON tree) where ``predicate(node)``."""
    found = [path] if predicate(tree) else []
    if isinstance(tree, dict):
        for key, value in tree.items():
            found += find_nodes(value, predicate, path + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            found += find_nodes(value, predicate, path + (i,))
    return found


_find_nodes = find_nodes


def node_at(tree, path):
    for key in path:
        tree = tree[key]
    return tree


def _set(path, *keys, value):
    """An edit setting ``node_at(meta, path + keys[:-1])[keys[-1]] = value`` (a copy of ``value``)."""
    def edit(meta, arrays):
        node_at(meta, path + keys[:-1])[keys[-1]] = json.loads(json.dumps(value))
    return edit


def _array_edit(path, attribute, change):
    """An edit replacing the array of ``attribute`` of the estimator node at ``path`` by ``change(array)``."""
    def edit(meta, arrays):
        key = node_at(meta, path)["attributes"][attribute]["__array__"]
        arrays[key] = change(arrays[key])
    return edit


_VECTORIZER_PARAMS = [
    ("tokenizer", {"__value__": "str.split"}), ("preprocessor", {"__value__": "eval"}),
    ("analyzer", {"__value__": "python"}), ("input", {"__value__": "filename"}),
    ("token_pattern", {"__value__": "("}), ("token_pattern", {"__value__": "(a)(b)"}),
    ("ngram_range", {"__tuple__": [{"__value__": 2}, {"__value__": 1}]}),
    ("ngram_range", {"__tuple__": [{"__value__": 0}, {"__value__": 1}]}),
    ("ngram_range", {"__tuple__": [{"__value__": 1.0}, {"__value__": 2}]}),
    ("stop_words", {"__list__": [{"__value__": 1}]}), ("stop_words", {"__value__": "french"}),
    ("encoding", {"__value__": "rot13"}), ("strip_accents", {"__value__": "rot13"}),
    ("dtype", {"__value__": "object"}), ("dtype", {"__type__": "object"}), ("dtype", {"__type__": "complex128"}),
    ("dtype", {"__dtype__": "|O"}), ("lowercase", {"__value__": 1}),
    ("vocabulary", {"__dict__": {"a": {"__value__": 0}}}),
]


def node_mutations(meta, nodes_per_kind=2):
    """``(label, edit(meta, arrays))`` of edits of a composite model file's text and calibration nodes.

    Each edit gives a file that :func:`linsep.save` would never write (a
    vocabulary with a non-string, repeated or missing term, or stored as a
    mapping with negative, out-of-range, non-integer or repeated columns or
    non-string keys; an ``idf_`` of the wrong length, dtype or values; an
    unknown score function, dtype or scalar; a callable-taking parameter given
    a name; calibrators of the wrong number or kind …): the reader must refuse
    every one.  Apply them with :func:`rewrite_model_file`.  Each kind of node is edited at its first
    ``nodes_per_kind`` places (a calibrated model repeats its nodes once per fold and class).
    """
    edits = []

    def find_nodes(tree, predicate):
        return _find_nodes(tree, predicate)[:nodes_per_kind]

    def _estimators(meta, names):
        return find_nodes(meta, lambda n: isinstance(n, dict) and n.get("__estimator__") in names)
    for path in find_nodes(meta, lambda n: isinstance(n, dict) and set(n) == {"__vocabulary__"}):
        terms = node_at(meta, path)["__vocabulary__"]
        for label, value in [("a number as a term", [7] + terms[1:]), ("null as a term", terms[:-1] + [None]),
                             ("a repeated term", terms[:1] + terms[:1] + terms[2:]), ("no terms", []),
                             ("a string", " ".join(terms)), ("a mapping", {t: i for i, t in enumerate(terms)})]:
            edits.append((f"vocabulary_ with {label}", _set(path, "__vocabulary__", value=value)))
        mapping = {t: {"__value__": i} for i, t in enumerate(terms)}
        first = terms[0]
        for label, column in [("a negative column", -1), ("an out-of-range column", len(terms)),
                              ("a float column", 0.0), ("a boolean column", False), ("a repeated column", 1),
                              ("a string column", "0")]:
            edits.append((f"vocabulary_ as a mapping with {label}",
                          _set(path[:-1], path[-1], value={"__dict__": {**mapping, first: {"__value__": column}}})))
        edits.append(("vocabulary_ as a mapping with non-string keys",
                      _set(path[:-1], path[-1], value={"__items__": [[{"__value__": i}, {"__value__": i}]
                                                                     for i in range(len(terms))]})))
        edits.append(("vocabulary_ as a list of pairs", _set(path[:-1], path[-1], value={"__list__": [
            {"__list__": [{"__value__": t}, {"__value__": i}]} for i, t in enumerate(terms)]})))
    for path in _estimators(meta, {"CountVectorizer", "TfidfVectorizer", "HashingVectorizer"}):
        name = node_at(meta, path)["__estimator__"]
        for param, value in _VECTORIZER_PARAMS:
            if param == "vocabulary" and "vocabulary_" not in node_at(meta, path)["attributes"]:
                continue  # a vocabulary parameter is valid on an unfitted vectorizer
            edits.append((f"{name}.{param} = {value}", _set(path, "params", param, value=value)))
        attributes = node_at(meta, path)["attributes"]
        if "vocabulary_" in attributes:
            edits.append((f"{name} without vocabulary_", lambda m, a, p=path: node_at(m, p)["attributes"].pop(
                "vocabulary_")))
            fixed = attributes["fixed_vocabulary_"]["__value__"]
            edits.append((f"{name}.fixed_vocabulary_ = {not fixed}", _set(path, "attributes", "fixed_vocabulary_",
                                                                          value={"__value__": not fixed})))
            edits.append((f"{name}.vocabulary parameter of other terms", _set(path, "params", "vocabulary", value={
                "__list__": [{"__value__": f"x{i}"} for i in range(len(node_at(
                    meta, path)["attributes"]["vocabulary_"]["__vocabulary__"]))]})))
            edits.append((f"{name} with a stored _stop_words_id", _set(path, "attributes", "_stop_words_id",
                                                                       value={"__value__": 1})))
        if name == "HashingVectorizer":
            edits.append(("HashingVectorizer.n_features changed", lambda m, a, p=path: node_at(m, p)["params"][
                "n_features"].update(__value__=node_at(m, p)["params"]["n_features"]["__value__"] + 1)))
        if "_tfidf" in attributes:
            for param, value in [("norm", {"__value__": "l1"}), ("use_idf", {"__value__": False}),
                                 ("sublinear_tf", {"__value__": not node_at(meta, path)["params"]["sublinear_tf"][
                                     "__value__"]})]:
                edits.append((f"{name}._tfidf.{param} differs", _set(path, "attributes", "_tfidf", "params", param,
                                                                     value=value)))
            edits.append((f"{name}._tfidf a MaxAbsScaler", _set(path, "attributes", "_tfidf", "__estimator__",
                                                               value="MaxAbsScaler")))
    for path in _estimators(meta, {"TfidfTransformer"}):
        attributes = node_at(meta, path)["attributes"]
        if "idf_" in attributes:
            inner = path + ("attributes", "idf_")
            for label, change in [("one value short", lambda x: x[:-1]), ("one value long", lambda x: np.r_[x, 1.0]),
                                  ("a nan", lambda x: np.r_[np.nan, x[1:]]), ("an inf", lambda x: np.r_[np.inf, x[1:]]),
                                  ("integers", lambda x: x.astype(np.int64)), ("2-d", lambda x: x[None, :]),
                                  ("strings", lambda x: x.astype(str))]:
                edits.append((f"idf_ {label}", _array_edit(path, "idf_", change)))
            edits.append(("idf_ a number", _set(inner[:-1], "idf_", value={"__value__": 1.0})))
            edits.append(("idf_ with use_idf false", _set(path, "params", "use_idf", value={"__value__": False})))
            edits.append(("TfidfTransformer.n_features_in_ + 1", lambda m, a, p=path: node_at(m, p)["attributes"][
                "n_features_in_"].update(__value__=node_at(m, p)["attributes"]["n_features_in_"]["__value__"] + 1)))
    for path in find_nodes(meta, lambda n: isinstance(n, dict) and set(n) == {"__score_func__"}):
        for value in ["os.system", "", "CHI2", "f_regression", 5, None, ["chi2"]]:
            edits.append((f"score function {value!r}", _set(path, "__score_func__", value=value)))
        edits.append(("score function as a string", _set(path[:-1], path[-1], value={"__value__": "chi2"})))
    for path in _estimators(meta, {"SelectKBest", "SelectPercentile"}):
        if "scores_" in node_at(meta, path)["attributes"]:
            edits.append(("scores_ one value short", _array_edit(path, "scores_", lambda x: x[:-1])))
            edits.append(("scores_ of integers", _array_edit(path, "scores_", lambda x: x.astype(np.int64))))
            edits.append(("pvalues_ one value long", _array_edit(path, "pvalues_", lambda x: np.r_[x, 0.5])))
    for path in find_nodes(meta, lambda n: isinstance(n, dict) and set(n) == {"__type__"}):
        for value in ["object", "complex128", "str", "numpy.float64", "datetime64", 1]:
            edits.append((f"dtype type {value!r}", _set(path, "__type__", value=value)))
    for path in find_nodes(meta, lambda n: isinstance(n, dict) and set(n) == {"__scalar__", "value"}):
        for code, value in [("|O", 1), ("<c16", 1.0), ("<f8", "x"), ("|i1", 1000), ("<f4", 1e300), ("<f8", True),
                            ("<i8", 1.5), ("float64", 1.0)]:
            edits.append((f"scalar {code} {value!r}", _set(path[:-1], path[-1],
                                                           value={"__scalar__": code, "value": value})))
    for path in find_nodes(meta, lambda n: isinstance(n, dict) and set(n) == {"__calibrated__"}):
        node = node_at(meta, path)["__calibrated__"]
        calibrators = node["calibrators"]["__list__"]
        edits.append(("a calibrated classifier without its method", lambda m, a, p=path: node_at(m, p)[
            "__calibrated__"].pop("method")))
        edits.append(("one calibrator more", _set(path, "__calibrated__", "calibrators", "__list__",
                                                  value=calibrators + calibrators[:1])))
        edits.append(("one calibrator fewer", _set(path, "__calibrated__", "calibrators", "__list__",
                                                   value=calibrators[:-1])))
        edits.append(("calibrators not a list", _set(path, "__calibrated__", "calibrators",
                                                     value={"__value__": None})))
        edits.append(("another method", _set(path, "__calibrated__", "method", value={"__value__": "other"})))
        edits.append(("a scaler as the calibrated estimator", _set(path, "__calibrated__", "estimator", value={
            "__estimator__": "MaxAbsScaler", "params": {"copy": {"__value__": True}}, "attributes": {}})))
        edits.append(("classes as a list", _set(path, "__calibrated__", "classes", value={"__list__": []})))
    for path in _estimators(meta, {"_SigmoidCalibration", "_TemperatureScaling", "IsotonicRegression"}):
        name, attributes = node_at(meta, path)["__estimator__"], node_at(meta, path)["attributes"]
        edits.append((f"{name} with a parameter", _set(path, "params", "copy", value={"__value__": True})))
        for attribute in ("a_", "b_", "beta_", "X_min_"):
            if attribute in attributes:
                edits.append((f"{name}.{attribute} nan", _set(path, "attributes", attribute, value={"__value__": None})))
                edits.append((f"{name}.{attribute} a string", _set(path, "attributes", attribute,
                                                                    value={"__value__": "1"})))
        if "beta_" in attributes:
            edits.append(("beta_ negative", _set(path, "attributes", "beta_",
                                                 value={"__scalar__": "<f8", "value": -1.0})))
        if "X_thresholds_" in attributes:
            edits.append(("an interpolation function stored", _set(path, "attributes", "f_",
                                                                   value={"__value__": "scipy.interpolate"})))
            edits.append(("X_thresholds_ reversed", _array_edit(path, "X_thresholds_", lambda x: x[::-1].copy())))
            edits.append(("X_thresholds_ empty", _array_edit(path, "X_thresholds_", lambda x: x[:0])))
            edits.append(("y_thresholds_ one value short", _array_edit(path, "y_thresholds_", lambda x: x[:-1])))
            edits.append(("y_thresholds_ with a nan", _array_edit(path, "y_thresholds_",
                                                                  lambda x: np.r_[np.nan, x[1:]])))
    for path in _estimators(meta, {"CalibratedClassifierCV"}):
        node = node_at(meta, path)
        if "calibrated_classifiers_" in node["attributes"]:
            items = node["attributes"]["calibrated_classifiers_"]["__list__"]
            edits.append(("no calibrated classifiers", _set(path, "attributes", "calibrated_classifiers_",
                                                            "__list__", value=[])))
            edits.append(("a calibrated classifier a scaler", _set(path, "attributes", "calibrated_classifiers_",
                                                                   "__list__", 0, value={
                "__estimator__": "MaxAbsScaler", "params": {"copy": {"__value__": True}}, "attributes": {}})))
            if len(items) > 1:
                edits.append(("ensemble false with several", _set(path, "params", "ensemble",
                                                                  value={"__value__": False})))
            other = {"sigmoid": "isotonic", "isotonic": "temperature", "temperature": "sigmoid"}
            edits.append(("the method changed", _set(path, "params", "method", value={
                "__value__": other[node["params"]["method"]["__value__"]]})))
            edits.append(("classes_ of other labels", _array_edit(path, "classes_", lambda x: np.sort(
                np.char.add(x.astype(str), "!")) if x.dtype.kind == "U" else x + 100)))
        edits.append(("cv a string", _set(path, "params", "cv", value={"__value__": "prefit"})))
        edits.append(("no estimator", _set(path, "params", "estimator", value={"__value__": None})))
        edits.append(("a scaler as the estimator", _set(path, "params", "estimator", value={
            "__estimator__": "MaxAbsScaler", "params": {"copy": {"__value__": True}}, "attributes": {}})))
    return edits


def _refuse_pickle(*args, **kwargs):
    raise AssertionError("pickle was called")


def load_refusing_pickle(path):
    """``linsep.load(path)`` with every entry point of pickle raising (fitting may use pickle: numba's cache does)."""
    import pickle

    import pytest

    import linsep

    with pytest.MonkeyPatch.context() as patch:
        for name in ("load", "loads", "Unpickler"):
            patch.setattr(pickle, name, _refuse_pickle)
        return linsep.load(path)
