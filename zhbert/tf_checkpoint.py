"""TensorFlow checkpoints (``model.ckpt.index`` beside ``model.ckpt.data-00000-of-00001``), read
without TensorFlow.

Google's Chinese BERT, and many Chinese encoders after it, were released this way. The format is
TensorFlow's tensor bundle: the ``.index`` file is a LevelDB-format table (sorted keys, blocks of
prefix-compressed entries, a 48-byte footer) mapping each variable's name to a ``BundleEntryProto``
(dtype, shape, shard, offset, size); the tensors' bytes lie in the ``.data-*`` shards. Reading it
takes a few dozen lines of the wire formats, so converting a checkpoint needs no 500 MB framework,
and, unlike pickle, nothing in the files can run code.

The index is input like any other: its size is bounded, every entry's shape must give the byte
count it claims, and every byte range must lie inside its shard, so a damaged or cut download is an
error naming the file and the variable, before anything is allocated from it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ModelLoadError

__all__ = ["TFCheckpoint", "checkpoint_prefix"]

_TABLE_MAGIC = 0xDB4775248B80FB57  # LevelDB's table magic number, which TensorFlow's tables keep
_FOOTER = 48  # two block handles padded to 40 bytes, then the magic number
_MAX_INDEX_BYTES = 64 * 2**20  # BERT-large's index is about 30 KB
# TensorFlow's DataType numbers of the dtypes weights are stored in
_DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 9: np.int64, 19: np.float16, 14: "bfloat16"}
_DTYPE_NAMES = {7: "string", 10: "bool", 4: "uint8", 5: "int16", 6: "int8"}


@dataclass(frozen=True)
class _Entry:
    dtype: int
    shape: tuple[int, ...]
    shard: int
    offset: int
    size: int
    sliced: bool  # a partitioned variable: its value lies in slices under other keys


def _varint(buf: bytes, pos: int, where: str) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError(f"{where}: a varint runs past its data")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _proto_fields(buf: bytes, where: str) -> dict[int, list]:
    """Protocol buffer wire format: field number -> values (ints, or bytes for length-delimited)."""
    fields: dict[int, list] = {}
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos, where)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos, where)
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos, where)
            value, pos = buf[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"{where}: wire type {wire} in a protocol buffer")
        if pos > len(buf):
            raise ValueError(f"{where}: a field runs past its data")
        fields.setdefault(number, []).append(value)
    return fields


def _block_entries(data: bytes, where: str):
    """(key, value) of one table block: entries sharing a prefix with the key before, then the restart offsets."""
    if len(data) < 4:
        raise ValueError(f"{where}: a block of {len(data)} bytes")
    restarts = struct.unpack_from("<I", data, len(data) - 4)[0]
    end = len(data) - 4 - 4 * restarts
    if end < 0:
        raise ValueError(f"{where}: {restarts:,} restart points in a block of {len(data):,} bytes")
    pos, key = 0, b""
    while pos < end:
        shared, pos = _varint(data, pos, where)
        unshared, pos = _varint(data, pos, where)
        size, pos = _varint(data, pos, where)
        if shared > len(key) or pos + unshared + size > end:
            raise ValueError(f"{where}: an entry runs past its block")
        key = key[:shared] + data[pos : pos + unshared]
        pos += unshared
        yield key, data[pos : pos + size]
        pos += size


def _block(index: bytes, handle: bytes, where: str) -> bytes:
    offset, pos = _varint(handle, 0, where)
    size, _ = _varint(handle, pos, where)
    if offset + size + 5 > len(index) - _FOOTER:
        raise ValueError(f"{where}: a block at byte {offset:,} runs past the table")
    if index[offset + size] != 0:  # the trailer's compression byte; TensorFlow writes bundle indexes uncompressed
        raise ValueError(f"{where}: a compressed block (type {index[offset + size]}), which checkpoints do not use")
    return index[offset : offset + size]


def _field(fields: dict[int, list], number: int, kind: type, default, where: str):
    """The first value of a field, checked to be of the wire kind the message defines it with."""
    value = fields.get(number, [default])[0]
    if not isinstance(value, kind):
        raise ValueError(f"{where}: field {number} holds {type(value).__name__}, not {kind.__name__}")
    return value


def _entry(name: str, value: bytes, where: str) -> _Entry:
    fields = _proto_fields(value, where)
    dims = []
    for dim in _proto_fields(_field(fields, 2, bytes, b"", where), where).get(2, []):
        if not isinstance(dim, bytes):
            raise ValueError(f"{where}: {name!r} has a malformed shape")
        size = _field(_proto_fields(dim, where), 1, int, 0, where)
        if size >= 2**62:  # a negative size as a varint: an unknown dimension
            raise ValueError(f"{where}: {name!r} has a dimension of unknown size")
        dims.append(size)
    return _Entry(
        dtype=_field(fields, 1, int, 0, where),
        shape=tuple(dims),
        shard=_field(fields, 3, int, 0, where),
        offset=_field(fields, 4, int, 0, where),
        size=_field(fields, 5, int, 0, where),
        sliced=7 in fields,
    )


def checkpoint_prefix(path: str | Path) -> Path:
    """The checkpoint a path names: a prefix (``model.ckpt``, ``model.ckpt-100000``), its ``.index``
    file, or a folder holding one checkpoint (or a ``checkpoint`` file naming the newest)."""
    path = Path(path)
    if path.name.endswith(".index") and path.is_file():
        return path.with_name(path.name[: -len(".index")])
    if path.with_name(path.name + ".index").is_file():
        return path
    if not path.is_dir():
        raise ModelLoadError(f"{path}: no TensorFlow checkpoint here (expected a folder, or a prefix with a .index file beside it)")
    indexes = sorted(p for p in path.glob("*.index") if p.is_file())
    state = path / "checkpoint"  # tf.train.Saver's record of the newest checkpoint; its paths may be another machine's
    if len(indexes) > 1 and state.is_file():
        for line in state.read_text(encoding="utf-8", errors="replace").splitlines()[:1]:
            if line.startswith("model_checkpoint_path:"):
                newest = path / Path(line.split(":", 1)[1].strip().strip('"')).name
                if newest.with_name(newest.name + ".index").is_file():
                    return newest
    if len(indexes) != 1:
        found = ", ".join(p.name[: -len(".index")] for p in indexes[:5]) or "none"
        example = path / (indexes[-1].name[: -len(".index")] if indexes else "model.ckpt")
        raise ModelLoadError(f"{path}: {len(indexes)} TensorFlow checkpoints ({found}); name one, e.g. {example}")
    return indexes[0].with_name(indexes[0].name[: -len(".index")])


class TFCheckpoint:
    """The variables of a TensorFlow checkpoint: names and shapes from the index, each tensor read
    from its shard when asked for."""

    def __init__(self, path: str | Path):
        self.prefix = checkpoint_prefix(path)
        self.index = self.prefix.with_name(self.prefix.name + ".index")
        where = str(self.index)
        size = self.index.stat().st_size
        if size > _MAX_INDEX_BYTES:
            raise ModelLoadError(f"{where}: {size:,} bytes; a checkpoint's index is a few KB to a few MB")
        data = self.index.read_bytes()
        try:
            if len(data) < _FOOTER or int.from_bytes(data[-8:], "little") != _TABLE_MAGIC:
                raise ValueError(f"{where}: not a TensorFlow checkpoint index (no table footer)")
            footer = data[-_FOOTER:]
            pos = 0
            for _ in range(2):  # the metaindex block's handle (offset, size): unused by checkpoints
                _, pos = _varint(footer, pos, where)
            index_handle = footer[pos:]  # the index block's handle: its offset and size, then padding
            self.entries: dict[str, _Entry] = {}
            shards = 1
            for _, handle in _block_entries(_block(data, index_handle, where), where):
                for key, value in _block_entries(_block(data, handle, where), where):
                    name = key.decode("utf-8", errors="replace")
                    if key == b"":  # the bundle's header
                        header = _proto_fields(value, where)
                        shards = _field(header, 1, int, 1, where)
                        if _field(header, 2, int, 0, where) != 0:
                            raise ValueError(f"{where}: a big-endian checkpoint")
                    else:
                        self.entries[name] = _entry(name, value, where)
        except ValueError as e:
            raise ModelLoadError(f"not a readable TensorFlow checkpoint index: {e}") from None
        if not self.entries:
            raise ModelLoadError(f"{where}: a checkpoint index that lists no variables")
        if not 1 <= shards <= 10_000:
            raise ModelLoadError(f"{where}: {shards:,} data shards")
        self.shards = [self.prefix.with_name(f"{self.prefix.name}.data-{i:05d}-of-{shards:05d}") for i in range(shards)]

    def shape(self, name: str) -> tuple[int, ...]:
        return self.entries[name].shape

    def check(self, name: str) -> None:
        """Raise unless ``name``'s bytes can be read: a dtype of weights, a size its shape gives, a
        range inside a shard that is there. Nothing is read or allocated."""
        self._located(name)

    def _located(self, name: str):
        entry = self.entries[name]
        where = f"{self.index}: {name!r}"
        if entry.sliced:
            raise ModelLoadError(f"{where} is a partitioned variable (saved in slices), which this reader does not join")
        dtype = _DTYPES.get(entry.dtype)
        if dtype is None:
            raise ModelLoadError(f"{where} holds {_DTYPE_NAMES.get(entry.dtype, f'DataType {entry.dtype}')} values, not weights")
        itemsize = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
        if entry.size != math.prod(entry.shape) * itemsize:
            raise ModelLoadError(f"{where}: {entry.size:,} bytes for a {list(entry.shape)} tensor of {itemsize}-byte values")
        if entry.shard >= len(self.shards):
            raise ModelLoadError(f"{where}: in shard {entry.shard}, of {len(self.shards)}")
        shard = self.shards[entry.shard]
        if not shard.is_file():
            raise ModelLoadError(f"{shard}: missing (the checkpoint's data; the download may be incomplete)")
        if entry.offset + entry.size > shard.stat().st_size:
            end = entry.offset + entry.size
            raise ModelLoadError(f"{shard}: {shard.stat().st_size:,} bytes, but {name!r} ends at byte {end:,} (a cut download?)")
        return entry, dtype, shard

    def read(self, name: str) -> np.ndarray:
        """One variable's value; its byte range is checked against its shape and its shard's size first."""
        entry, dtype, shard = self._located(name)
        with open(shard, "rb") as f:
            f.seek(entry.offset)
            raw = f.read(entry.size)
        if dtype == "bfloat16":  # the top half of a float32
            return (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32).reshape(entry.shape)
        return np.frombuffer(raw, np.dtype(dtype).newbyteorder("<")).reshape(entry.shape).copy()
