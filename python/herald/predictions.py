"""Reads `heraldctl evaluate --predictions FILE` (docs/python.md): each
scored held-out sample's label, Herald's prediction and the inputs the
model saw, as the arrays herald.torch's models take.

    p = herald.read_predictions("preds.tsv")
    p.labels, p.predictions          # float32 (n,); (n, heads) for a model of several heads
    p.dense                          # float32 (n, num_dense)
    p.features                       # names, in the model's feature order
    keys, offsets, weights = p.bags[0]  # int64 keys (uint64 viewed), int64
                                        # offsets (n + 1), float32 weights or None
"""

import numpy as np

from herald.errors import HeraldError


class Predictions:
    def __init__(self, features, labels, predictions, dense, bags):
        self.features = features
        self.labels = labels
        self.predictions = predictions
        self.dense = dense
        self.bags = bags

    def __len__(self):
        return len(self.labels)


def _bad(path, line, why):
    return HeraldError("DATA_LOSS", "%s line %d: %s" % (path, line, why))


def read_predictions(path):
    """Raises HeraldError (NOT_FOUND; DATA_LOSS naming the line)."""
    try:
        f = open(path)
    except FileNotFoundError:
        raise HeraldError("NOT_FOUND", "%s: no such file" % path) from None
    with f:
        header = f.readline().rstrip("\n").split("\t")
        if header[:3] != ["label", "prediction", "dense"]:
            raise _bad(path, 1, "not a predictions file (the first line names %s)" % header[:3])
        features = header[3:]
        labels, predictions, dense = [], [], []
        keys = [[] for _ in features]
        weights = [[] for _ in features]
        lengths = [[] for _ in features]
        weighted = [None] * len(features)
        for number, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3 + len(features):
                raise _bad(path, number, "%d fields, the header names %d" %
                           (len(fields), 3 + len(features)))
            try:
                # A model of several heads: one value per head, comma-separated.
                labels.append([float(v) for v in fields[0].split(",")])
                predictions.append([float(v) for v in fields[1].split(",")])
                if len(labels[-1]) != len(labels[0]) or len(predictions[-1]) != len(labels[0]):
                    raise _bad(path, number, "%d labels and %d predictions, line 2 has %d" %
                               (len(labels[-1]), len(predictions[-1]), len(labels[0])))
                dense.append([float(v) for v in fields[2].split(",")] if fields[2] else [])
                for i, text in enumerate(fields[3:]):
                    ids = text.split(" ") if text else []
                    lengths[i].append(len(ids))
                    for entry in ids:
                        key, _, weight = entry.partition(":")
                        if weighted[i] is None:
                            weighted[i] = bool(weight)
                        keys[i].append(int(key))
                        weights[i].append(float(weight) if weight else 1.0)
            except ValueError as e:
                raise _bad(path, number, str(e)) from None
    bags = []
    for i in range(len(features)):
        k = np.array(keys[i], dtype=np.uint64).view(np.int64)
        offsets = np.zeros(len(labels) + 1, dtype=np.int64)
        np.cumsum(lengths[i], out=offsets[1:])
        w = np.array(weights[i], dtype=np.float32) if weighted[i] else None
        bags.append((k, offsets, w))
    width = len(dense[0]) if dense else 0
    heads = len(labels[0]) if labels else 1
    shape = (len(labels),) if heads == 1 else (len(labels), heads)
    return Predictions(features, np.array(labels, np.float32).reshape(shape),
                       np.array(predictions, np.float32).reshape(shape),
                       np.array(dense, np.float32).reshape(len(labels), width), bags)
