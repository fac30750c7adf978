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
