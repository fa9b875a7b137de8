"""Reads an exported model (docs/export.md) as NumPy arrays.

    m = herald.read_export("/models/ctr")
    m.spec                      # the JobSpec the model was trained with
    m.dense                     # float32 array of the dense parameters
    t = m.tables[0]             # by table id, in the spec's table order
    t.keys, t.rows              # uint64 (n,), float32 (n, row_floats)
    t.embeddings                # rows[:, :dim]
    t.row(key)                  # one key's row, or None (never trained)

Shard files are memory-mapped and a table's arrays are built when first
asked for, so a model larger than memory can be read table by table. An
increment (its MODEL names a `base`) is read with its chain: the oldest
export first, each newer one's rows replacing or adding to it, the newest
dense parameters. Every checksum is checked (MODEL's dense CRC, the
manifest's whole-file CRC of each shard, each shard's own footer); a
missing, damaged or truncated file raises HeraldError naming the file and,
inside a file, the byte offset.
"""

import os
import struct
import zlib

import numpy as np
from google.protobuf import text_format

from herald._proto import checkpoint_pb2, scheduler_pb2
from herald.errors import HeraldError

_SHARD_MAGIC = b"HRLDSHRD"
_END_MAGIC = b"HRLDEND1"


def _loss(path, offset, why):
    where = path if offset is None else "%s at offset %d" % (path, offset)
    return HeraldError("DATA_LOSS", "%s: %s" % (where, why))


def _crc32_of_file(path, limit=None):
    crc = 0
    left = os.path.getsize(path) if limit is None else limit
    with open(path, "rb") as f:
        while left > 0:
            chunk = f.read(min(left, 1 << 22))
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    return crc


def _text_proto(path, message):
    try:
        with open(path, "rb") as f:
            text_format.Parse(f.read().decode(), message)
    except FileNotFoundError:
        raise HeraldError("NOT_FOUND", "%s: no such file" % path) from None
    except text_format.ParseError as e:
        raise HeraldError("DATA_LOSS", "%s: not a %s: %s" %
                          (path, message.DESCRIPTOR.name, e)) from None
    return message


class _ShardTable:
    """One table's records in one shard file (memory-mapped)."""

    def __init__(self, path, offset, dim, row_floats, rows):
        self.dim = dim
        self.row_floats = row_floats
        dtype = np.dtype([("key", "<u8"), ("version", "<u8"), ("row", "<f4", (row_floats,))])
        self.records = np.memmap(path, dtype=dtype, mode="r", offset=offset,
                                 shape=(rows,)) if rows else np.zeros(0, dtype=dtype)


def _read_shard(path, expected_crc):
    """The tables of one shard file: {table_id: _ShardTable}."""
    size = os.path.getsize(path)
    if expected_crc is not None:
        crc = "%08x" % _crc32_of_file(path)
        if crc != expected_crc.lower():
            raise _loss(path, None, "checksum %s, the manifest says %s" % (crc, expected_crc))
    with open(path, "rb") as f:
        def take(n, at, what):
            data = f.read(n)
            if len(data) != n:
                raise _loss(path, at, "truncated in %s" % what)
            return data
        if take(8, 0, "the magic") != _SHARD_MAGIC:
            raise _loss(path, 0, "not a shard file (bad magic)")
        version, _shard, _shards, _iteration, id_len = struct.unpack("<IIIQI", take(24, 8, "the header"))
        if version != 1:
            raise _loss(path, 8, "shard file version %d (this reader reads 1)" % version)
        take(id_len, 32, "the job id")
        at = 32 + id_len
        (num_tables,) = struct.unpack("<I", take(4, at, "the table count"))
        at += 4
        tables = {}
        total = 0
        for _ in range(num_tables):
            table_id, dim, row_floats, _kind, rows = struct.unpack("<IIIIQ", take(24, at, "a table header"))
            at += 24
            record = 16 + 4 * row_floats
            if at + rows * record > size:
                raise _loss(path, at, "table %d's %d rows run past the end of the file" % (table_id, rows))
            tables[table_id] = _ShardTable(path, at, dim, row_floats, rows)
            at += rows * record
            total += rows
            f.seek(at)
        footer = take(20, at, "the footer")
        if footer[:8] != _END_MAGIC:
            raise _loss(path, at, "no end marker (truncated or damaged)")
        written_total, crc = struct.unpack("<QI", footer[8:])
        if written_total != total:
            raise _loss(path, at, "footer counts %d rows, tables hold %d" % (written_total, total))
        if at + 20 != size:
            raise _loss(path, at + 20, "%d bytes after the footer" % (size - at - 20))
        if _crc32_of_file(path, at + 16) != crc:
            raise _loss(path, at + 16, "CRC mismatch")
    return tables


class Table:
    """One embedding table of the model: rows of `row_floats` floats, the
    embedding (`dim` values) followed by the optimizer state."""

    def __init__(self, table_id, name, dim, row_floats, parts, deleted=()):
        self.id = table_id
        self.name = name
        self.dim = dim
        self.row_floats = row_floats
        self._parts = parts  # [(export index, _ShardTable)], oldest export (0) first
        # [(export index, keys)]: rows of those keys in older exports are gone
        # (row expiry's deletions, carried by increments).
        self._deleted = list(deleted)
        self._keys = None
        self._rows = None
        self._index = None

    def _load(self):
        if self._keys is not None:
            return
        keys = [p.records["key"] for _, p in self._parts]
        rows = [p.records["row"] for _, p in self._parts]
        if not keys:
            self._keys = np.zeros(0, np.uint64)
            self._rows = np.zeros((0, self.row_floats), np.float32)
            return
        all_keys = np.concatenate(keys)
        all_rows = np.concatenate(rows).reshape(-1, self.row_floats)
        if self._deleted:
            # A row survives unless an export newer than its own deleted its key.
            of = np.concatenate([np.full(len(p.records), i) for i, p in self._parts])
            dead_keys = np.concatenate([k for _, k in self._deleted])
            dead_at = np.concatenate([np.full(len(k), i) for i, k in self._deleted])
            order = np.argsort(dead_keys, kind="stable")
            dead_keys, dead_at = dead_keys[order], dead_at[order]
            # The newest deletion of each key.
            last = np.r_[dead_keys[1:] != dead_keys[:-1], True]
            dead_keys, dead_at = dead_keys[last], dead_at[last]
            at = np.searchsorted(dead_keys, all_keys)
            hit = at < len(dead_keys)
            hit[hit] = dead_keys[at[hit]] == all_keys[hit]
            gone = np.zeros(len(all_keys), bool)
            gone[hit] = dead_at[at[hit]] > of[hit]
            all_keys, all_rows = all_keys[~gone], all_rows[~gone]
            if len(all_keys) == 0:
                self._keys = np.zeros(0, np.uint64)
                self._rows = np.zeros((0, self.row_floats), np.float32)
                return
        # A key in several exports of a chain: the newest row wins; keys in
        # order of first appearance, as the C++ reader lists them.
        _, first = np.unique(all_keys, return_index=True)
        _, last_reversed = np.unique(all_keys[::-1], return_index=True)
        last = len(all_keys) - 1 - last_reversed
        order = np.argsort(first, kind="stable")
        self._keys = all_keys[first[order]]
        self._rows = all_rows[last[order]]

    @property
    def keys(self):
        self._load()
        return self._keys

    @property
    def rows(self):
        self._load()
        return self._rows

    @property
    def embeddings(self):
        return self.rows[:, :self.dim]

    def row(self, key):
        """The row of `key`, or None when the model never trained it."""
        if self._index is None:
            self._index = {int(k): i for i, k in enumerate(self.keys)}
        i = self._index.get(int(key))
        return None if i is None else self.rows[i]

    def __len__(self):
        return len(self.keys)


class Export:
    """A model read from an export directory (and its chain of bases)."""

    def __init__(self, manifest, dense, tables, chain):
        self.manifest = manifest  # ModelExport of the newest export
        self.spec = manifest.spec
        self.job_id = manifest.job_id
        self.iterations = manifest.iterations
        self.dense = dense
        self.tables = tables
        self.chain = chain  # the directories read, oldest first

    def table(self, name):
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)


def _checked_file(path, relative, field, size, what, crc32_hex):
    """The file MODEL's `field` names (`relative` to the export `path`),
    checked against the size and CRC-32 MODEL gives (`what` it holds)."""
    full = os.path.join(path, relative)
    if not os.path.exists(full):
        raise HeraldError("NOT_FOUND", "%s: no such file (MODEL's %s)" % (full, field))
    if os.path.getsize(full) != size:
        raise _loss(full, None, "%d bytes, MODEL says %s" % (os.path.getsize(full), what))
    crc = "%08x" % _crc32_of_file(full)
    if crc != crc32_hex.lower():
        raise _loss(full, None, "checksum %s, MODEL says %s" % (crc, crc32_hex))
    return full


def _read_deleted(path, manifest):
    """{table_id: keys} an increment deletes from its chain (row expiry)."""
    if not manifest.deleted_file:
        return {}
    deleted_path = _checked_file(path, manifest.deleted_file, "deleted_file",
                                 16 * manifest.deleted_rows, "%d deleted rows" % manifest.deleted_rows,
                                 manifest.deleted_crc32)
    records = np.fromfile(deleted_path, dtype=np.dtype([("table", "<u4"), ("pad", "<u4"), ("key", "<u8")]))
    return {int(t): records["key"][records["table"] == t] for t in np.unique(records["table"])}


def _read_one(path):
    """(ModelExport, dense array, {table_id: [_ShardTable]}, {table_id: deleted keys})
    of one export."""
    if not os.path.isdir(path):
        raise HeraldError("NOT_FOUND", "%s: no such export directory" % path)
    model_path = os.path.join(path, "MODEL")
    if not os.path.exists(model_path):
        raise HeraldError("NOT_FOUND", "%s: not an export (no MODEL file)" % path)
    manifest = _text_proto(model_path, scheduler_pb2.ModelExport())
    if manifest.format_version != 1:
        raise _loss(model_path, None, "format_version %d (this reader reads 1)" % manifest.format_version)
    dense_path = _checked_file(path, manifest.dense_file, "dense_file", 4 * manifest.dense_floats,
                               "%d floats" % manifest.dense_floats, manifest.dense_crc32)
    dense = np.fromfile(dense_path, dtype="<f4")
    tables_path = os.path.join(path, manifest.tables_manifest)
    shards = _text_proto(tables_path, checkpoint_pb2.CheckpointManifest())
    parts = {}
    for shard in shards.shards:
        shard_path = os.path.join(os.path.dirname(tables_path), shard.file)
        if not os.path.exists(shard_path):
            raise HeraldError("NOT_FOUND", "%s: no such file (%s)" % (shard_path, tables_path))
        for table_id, table in _read_shard(shard_path, shard.checksum).items():
            parts.setdefault(table_id, []).append(table)
    return manifest, dense, parts, _read_deleted(path, manifest)


def read_export(path):
    """Reads the export in `path` (with its chain of bases, for an increment).
    Raises HeraldError (NOT_FOUND, DATA_LOSS) naming the file."""
    chain = []
    read = []  # (parts, deleted) per export, newest first
    current = os.path.abspath(path)
    while True:
        if current in chain:
            raise _loss(current, None, "the chain of bases loops")
        chain.append(current)
        manifest, dense, parts, deleted = _read_one(current)
        if len(chain) == 1:
            newest = (manifest, dense)
        read.append((parts, deleted))
        if not manifest.base:
            break
        current = manifest.base
    read.reverse()  # oldest (index 0) first
    manifest, dense = newest
    tables = []
    for t, spec in enumerate(manifest.spec.tables):
        table_parts = [(i, p) for i, (parts, _) in enumerate(read) for p in parts.get(t, [])]
        table_deleted = [(i, deleted[t]) for i, (_, deleted) in enumerate(read) if t in deleted]
        dim = table_parts[0][1].dim if table_parts else spec.dim
        row_floats = table_parts[0][1].row_floats if table_parts else spec.dim
        tables.append(Table(t, spec.name, dim, row_floats, table_parts, table_deleted))
    return Export(manifest, dense, tables, list(reversed(chain)))
