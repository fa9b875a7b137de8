"""An exported Herald model as a PyTorch module (needs PyTorch).

    import herald.torch
    model = herald.torch.load_model("/models/ctr")   # torch.nn.Module, eval mode
    p = model(dense, keys, offsets, weights)           # (n,) predictions
    torch.jit.save(torch.jit.script(model), "ctr.pt")  # served without Herald

Inputs, one batch of n samples as the data readers give them:
  dense    float32 (n, num_dense)
  keys     one int64 tensor per sparse feature, in the model's feature order
           (a schema's sparse columns in column order; without a schema the
           tables in spec order): the ids' 64-bit keys (uint64 viewed as
           int64), every sample's back to back
  offsets  one int64 tensor of n + 1 per feature: sample s's keys are
           keys[offsets[s]:offsets[s + 1]]
  weights  one float32 tensor (one weight per key) or None per feature
Output: click probabilities for a binary label, values for a regression one.

The module holds each table's trained rows in a torch.nn.EmbeddingBag (the
embedding values only, no optimizer state) beside the table's sorted keys;
a key the model never trained gets the row Herald starts every key with
(the same Philox4x32 stream of (seed, table, key), common/math), so the
module scores every id exactly as Herald does. Pooling is Herald's: the
rows' (weighted) sum, times 1, 1/n or 1/sqrt(n) of the bag's id count.
The dense network is a built-in model's or a model graph's (worker/model), its
parameters taken from the export's flat dense vector in Herald's layout.
Predictions equal Herald's (heraldctl evaluate) within float rounding.
"""

from typing import List, Optional, Tuple

import numpy as np
import torch
from torch import Tensor, nn

from herald._proto import job_pb2
from herald.errors import HeraldError
from herald.export import read_export

def _mul_hi_lo(a: int, b: Tensor) -> Tuple[Tensor, Tensor]:
    """High and low 32-bit words of a * b (a and b below 2^32), computed in
    16-bit halves so that no int64 product overflows."""
    a0 = a & 0xFFFF
    a1 = a >> 16
    b0 = torch.bitwise_and(b, 0xFFFF)
    b1 = torch.div(b, 65536, rounding_mode="floor")
    middle = b0 * a1 + b1 * a0
    low = b0 * a0 + torch.bitwise_and(middle, 0xFFFF) * 65536
    hi = b1 * a1 + torch.div(middle, 65536, rounding_mode="floor") + \
        torch.div(low, 4294967296, rounding_mode="floor")
    return torch.bitwise_and(hi, 0xFFFFFFFF), torch.bitwise_and(low, 0xFFFFFFFF)


def initial_rows(seed: int, table: int, keys: Tensor, dim: int, scale: float) -> Tensor:
    """Herald's initial embedding values of `keys` (int64) in `table`
    (Philox's constants written out: TorchScript reads no globals):
    float 4i + j of a row is word j of Philox4x32-10 of counter (i, table,
    key low, key high) under the seed, as a uniform u in [0, 1) with 24 bits,
    then (2u - 1) * scale (common/rng.cc InitEmbeddingRow)."""
    blocks = (dim + 3) // 4
    n = keys.shape[0]
    c0 = torch.arange(blocks, dtype=torch.int64).unsqueeze(0).expand(n, blocks)
    c1 = torch.full((n, blocks), table, dtype=torch.int64)
    c2 = torch.bitwise_and(keys, 0xFFFFFFFF).unsqueeze(1).expand(n, blocks)
    c3 = torch.bitwise_and(torch.div(keys, 4294967296, rounding_mode="floor"),
                           0xFFFFFFFF).unsqueeze(1).expand(n, blocks)
    k0 = seed & 0xFFFFFFFF
    k1 = (seed >> 32) & 0xFFFFFFFF
    for _ in range(10):
        hi0, lo0 = _mul_hi_lo(0xD2511F53, c0)
        hi1, lo1 = _mul_hi_lo(0xCD9E8D57, c2)
        c0, c1, c2, c3 = (torch.bitwise_xor(torch.bitwise_xor(hi1, c1), k0), lo1,
                          torch.bitwise_xor(torch.bitwise_xor(hi0, c3), k1), lo0)
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    words = torch.stack([c0, c1, c2, c3], dim=2).reshape(n, blocks * 4)[:, :dim]
    u = torch.div(words, 256, rounding_mode="floor").to(torch.float32) * (1.0 / 16777216.0)
    two = torch.tensor(2.0, dtype=torch.float32)
    one = torch.tensor(1.0, dtype=torch.float32)
    return (two * u - one) * torch.tensor(scale, dtype=torch.float32)


class Table(nn.Module):
    """One embedding table: its trained rows (an EmbeddingBag's weight),
    their keys sorted, and what a never-trained key starts with. With id
    admission or row expiry (`admits`: tables[].admission, tables[].expiry)
    a key without a row is absent from its bags instead, as Herald scores
    it."""

    def __init__(self, table: int, keys: np.ndarray, rows: np.ndarray, dim: int, seed: int,
                 init_scale: float, admits: bool = False):
        super().__init__()
        order = np.argsort(keys.view(np.int64), kind="stable")
        self.table = table
        self.admits = admits
        self.dim = dim
        self.seed = seed
        self.init_scale = init_scale
        self.register_buffer("keys", torch.from_numpy(keys.view(np.int64)[order].copy()))
        self.bag = nn.EmbeddingBag(max(len(keys), 1), dim, mode="sum")
        values = np.zeros((max(len(keys), 1), dim), np.float32)
        values[:len(keys)] = rows[order, :dim]
        self.bag.weight = nn.Parameter(torch.from_numpy(values), requires_grad=False)

    def forward(self, keys: Tensor, offsets: Tensor,
                weights: Optional[Tensor]) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
        """One feature's bags (`offsets`: n + 1 bounds into `keys`): the rows
        of their keys, and the bags' offsets and weights over those rows."""
        n = self.keys.shape[0]
        at = torch.clamp(torch.searchsorted(self.keys, keys), max=max(n - 1, 0))
        found = self.keys[at] == keys if n > 0 else torch.zeros_like(keys, dtype=torch.bool)
        rows = self.bag.weight[at]
        if self.admits:  # keys not admitted are absent: drop them from their bags
            kept = torch.cat([torch.zeros(1, dtype=torch.int64),
                              torch.cumsum(found.to(torch.int64), 0)])
            if weights is not None:
                weights = weights[found]
            return rows[found], kept[offsets], weights
        missing = torch.logical_not(found)
        if bool(missing.any()):
            fresh = initial_rows(self.seed, self.table, keys[missing], self.dim, self.init_scale)
            rows = rows.clone()
            rows[missing] = fresh
        return rows, offsets, weights


def pool(rows: Tensor, offsets: Tensor, weights: Optional[Tensor], pooling: int) -> Tensor:
    """One feature's bags from its entries' rows: the (weighted) sum of each
    bag's rows times 1, 1/n or 1/sqrt(n) (pooling: job_pb2.PoolingKind)."""
    entries = torch.arange(rows.shape[0], dtype=torch.int64)
    pooled = nn.functional.embedding_bag(entries, rows, offsets, mode="sum",
                                         per_sample_weights=weights, include_last_offset=True)
    if pooling == 0:  # POOLING_SUM
        return pooled
    counts = (offsets[1:] - offsets[:-1]).to(torch.float32)
    if pooling == 1:  # POOLING_MEAN
        scale = torch.ones_like(counts) / counts
    else:  # POOLING_SQRT_N
        scale = torch.ones_like(counts) / torch.sqrt(counts)
    scale = torch.where(counts > 0, scale, torch.ones_like(counts))
    return pooled * scale.unsqueeze(1)


class DenseParameters:
    """Takes Herald's flat dense vector block by block, in the order the
    C++ layers reserve them (worker/model/dense_parameters.h)."""

    def __init__(self, values: np.ndarray):
        self.values = values
        self.at = 0

    def take(self, n: int) -> np.ndarray:
        if self.at + n > len(self.values):
            raise HeraldError("DATA_LOSS", "the export's dense parameters hold %d floats, the "
                              "model needs more than %d" % (len(self.values), self.at))
        block = self.values[self.at:self.at + n]
        self.at += n
        return block

    def linear(self, fan_in: int, fan_out: int) -> nn.Linear:
        """Herald's Linear: x · W (W fan_in × fan_out, row-major) + b."""
        layer = nn.Linear(fan_in, fan_out)
        weight = self.take(fan_in * fan_out).reshape(fan_in, fan_out)
        layer.weight = nn.Parameter(torch.from_numpy(weight.T.copy()), requires_grad=False)
        layer.bias = nn.Parameter(torch.from_numpy(self.take(fan_out).copy()), requires_grad=False)
        return layer

    def mlp(self, fan_in: int, widths: List[int], relu_after_last: bool) -> nn.Sequential:
        layers: List[nn.Module] = []
        for i, width in enumerate(widths):
            layers.append(self.linear(fan_in, width))
            if i + 1 < len(widths) or relu_after_last:
                layers.append(nn.ReLU())
            fan_in = width
        return nn.Sequential(*layers)


class CrossLayer(nn.Module):
    """DCN: x_{l+1} = x_l + (x_l · w) x_0 + b."""

    def __init__(self, params: DenseParameters, width: int):
        super().__init__()
        self.register_buffer("w", torch.from_numpy(params.take(width).copy()))
        self.register_buffer("b", torch.from_numpy(params.take(width).copy()))

    def forward(self, x0: Tensor, xl: Tensor) -> Tensor:
        s = torch.matmul(xl, self.w.unsqueeze(1))
        return xl + s * x0 + self.b


class Model(nn.Module):
    """A built-in Herald model over its features (load_model builds it)."""

    def __init__(self, spec, tables: List[Table], features: List[Tuple[int, int]],
                 dense: np.ndarray):
        super().__init__()
        m = spec.model
        self.kind = int(m.kind)
        self.num_dense = int(spec.num_dense)
        self.regression = _is_regression(spec)
        self.tables = nn.ModuleList(tables)
        # Feature f pools by feature_pooling[f]; table t's features are
        # table_features[t].
        self.feature_pooling: List[int] = [p for _, p in features]
        self.table_features: List[List[int]] = [
            [f for f, (t, _) in enumerate(features) if t == table] for table in range(len(tables))]
        dims = [tables[t].dim for t, _ in features]
        self.dim = dims[0] if dims else 0
        self.fields = len(features)
        width = self.num_dense + sum(dims)
        hidden = [int(w) for w in m.top_mlp]
        params = DenseParameters(dense)
        self.first = nn.Linear(1, 1)  # replaced below where the model has one
        self.deep = nn.Sequential()
        self.bottom = nn.Sequential()
        self.cross = nn.ModuleList()
        if self.kind == job_pb2.MODEL_WIDE_AND_DEEP or self.kind == job_pb2.MODEL_DEEPFM:
            self.first = params.linear(width, 1)
            self.deep = params.mlp(width, hidden + [1], relu_after_last=False)
        elif self.kind == job_pb2.MODEL_DCN:
            self.deep = params.mlp(width, hidden, relu_after_last=True)
            self.first = params.linear(width + hidden[-1], 1)
            self.cross = nn.ModuleList([CrossLayer(params, width) for _ in range(m.cross_layers)])
        elif self.kind == job_pb2.MODEL_NCF:
            self.deep = params.mlp(width, hidden, relu_after_last=True)
            self.first = params.linear(self.dim + hidden[-1], 1)
        elif self.kind == job_pb2.MODEL_DLRM:
            bottom = [int(w) for w in m.bottom_mlp]
            self.bottom = params.mlp(self.num_dense, bottom, relu_after_last=True)
            pairs = self.fields + 1
            self.deep = params.mlp(self.dim + pairs * (pairs - 1) // 2, hidden + [1],
                                   relu_after_last=False)
            rows, cols = torch.tril_indices(pairs, pairs, offset=-1)
            self.register_buffer("pair_a", rows)
            self.register_buffer("pair_b", cols)
        else:
            raise HeraldError("INVALID_ARGUMENT", "model.kind %d: not one of the five built-in "
                              "models" % self.kind)
        if not hasattr(self, "pair_a"):
            self.register_buffer("pair_a", torch.zeros(0, dtype=torch.int64))
            self.register_buffer("pair_b", torch.zeros(0, dtype=torch.int64))
        if params.at != len(dense):
            raise HeraldError("DATA_LOSS", "the export's dense parameters hold %d floats, the "
                              "model takes %d" % (len(dense), params.at))

    def forward(self, dense: Tensor, keys: List[Tensor], offsets: List[Tensor],
                weights: Optional[List[Optional[Tensor]]] = None) -> Tensor:
        bags: List[Tensor] = [dense for _ in range(self.fields)]
        for t, table in enumerate(self.tables):
            for f in self.table_features[t]:
                w: Optional[Tensor] = None
                if weights is not None:
                    w = weights[f]
                rows, bounds, w = table(keys[f], offsets[f], w)
                bags[f] = pool(rows, bounds, w, self.feature_pooling[f])
        x = torch.cat([dense] + bags, dim=1)
        logit = self.logit(x, dense, bags)
        return logit if self.regression else torch.sigmoid(logit)

    def logit(self, x: Tensor, dense: Tensor, bags: List[Tensor]) -> Tensor:
        if self.kind == 1:  # MODEL_WIDE_AND_DEEP
            return (self.first(x) + self.deep(x)).squeeze(1)
        if self.kind == 2:  # MODEL_DEEPFM: first order + FM(bags) + deep
            v = torch.stack(bags, dim=1)  # (n, fields, dim)
            total = torch.sum(v, dim=1)
            fm = 0.5 * torch.sum(total * total - torch.sum(v * v, dim=1), dim=1, keepdim=True)
            return (self.first(x) + fm + self.deep(x)).squeeze(1)
        if self.kind == 3:  # MODEL_DCN
            xl = x
            for layer in self.cross:
                xl = layer(x, xl)
            return self.first(torch.cat([xl, self.deep(x)], dim=1)).squeeze(1)
        if self.kind == 4:  # MODEL_NCF: GMF of features 0 and 1, and the MLP
            gmf = bags[0] * bags[1]
            return self.first(torch.cat([gmf, self.deep(x)], dim=1)).squeeze(1)
        # MODEL_DLRM: pairwise dots of [bottom(dense), bags...], then the top MLP
        z = self.bottom(dense)
        v = torch.stack([z] + bags, dim=1)
        dots = torch.bmm(v, v.transpose(1, 2))[:, self.pair_a, self.pair_b]
        return self.deep(torch.cat([z, dots], dim=1)).squeeze(1)


class CrossV2Layer(nn.Module):
    """DCN-v2: x_{l+1} = x_0 * (x_l W + b) + x_l, W full or V U (rank r)
    (worker/model/cross_v2_layer.h: W, b or V, U, b in that order)."""

    def __init__(self, params: DenseParameters, width: int, rank: int):
        super().__init__()
        self.rank = rank
        if rank > 0:
            v = params.take(width * rank).reshape(width, rank)
            u = params.take(rank * width).reshape(rank, width)
        else:
            v = np.zeros((0, 0), np.float32)
            u = params.take(width * width).reshape(width, width)
        self.register_buffer("v", torch.from_numpy(v.copy()))
        self.register_buffer("u", torch.from_numpy(u.copy()))
        self.register_buffer("b", torch.from_numpy(params.take(width).copy()))

    def forward(self, x0: Tensor, xl: Tensor) -> Tensor:
        t = torch.matmul(xl, self.v) if self.rank > 0 else xl
        return x0 * (torch.matmul(t, self.u) + self.b) + xl


def _graph_order(nodes) -> List[int]:
    """The C++ order (common/model_graph.h): each node after its inputs, ties
    to the node listed first."""
    index = {n.name: i for i, n in enumerate(nodes)}
    placed: List[int] = []
    done = [False] * len(nodes)
    while len(placed) < len(nodes):
        for i, n in enumerate(nodes):
            if not done[i] and all(done[index[x]] for x in n.inputs):
                done[i] = True
                placed.append(i)
                break
        else:
            raise HeraldError("INVALID_ARGUMENT", "model.graph: a cycle")
    return placed


class _DenseNode(nn.Module):
    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        return dense


class _EmbeddingsNode(nn.Module):
    features: List[int]

    def __init__(self, features: List[int]):
        super().__init__()
        self.features = features

    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        return torch.cat([bags[f] for f in self.features], dim=1)


class _ConcatNode(nn.Module):
    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        return torch.cat(ins, dim=1)


class _SumNode(nn.Module):
    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        total = ins[0]
        for k in range(1, len(ins)):
            total = total + ins[k]
        return total


class _ProductNode(nn.Module):
    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        return ins[0] * ins[1]


class _DotNode(nn.Module):
    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        return torch.sum(ins[0] * ins[1], dim=1, keepdim=True)


class _MlpNode(nn.Module):
    def __init__(self, layers: nn.Sequential):
        super().__init__()
        self.layers = layers

    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        return self.layers(ins[0])


class _CrossNode(nn.Module):
    def __init__(self, layers: nn.ModuleList):
        super().__init__()
        self.layers = layers

    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        xl = ins[0]
        for layer in self.layers:
            xl = layer(ins[0], xl)
        return xl


class _FmNode(nn.Module):
    def __init__(self, fields: int, dim: int):
        super().__init__()
        self.fields = fields
        self.dim = dim

    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        v = ins[0].reshape(ins[0].shape[0], self.fields, self.dim)
        total = torch.sum(v, dim=1)
        return 0.5 * torch.sum(total * total - torch.sum(v * v, dim=1), dim=1, keepdim=True)


class _DotInteractionNode(nn.Module):
    def __init__(self, fields: int, dim: int, self_terms: bool):
        super().__init__()
        self.fields = fields
        self.dim = dim
        self.self_terms = self_terms
        rows, cols = torch.tril_indices(fields, fields, offset=-1)
        self.register_buffer("pair_a", rows)
        self.register_buffer("pair_b", cols)

    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        v = ins[0].reshape(ins[0].shape[0], self.fields, self.dim)
        dots = torch.bmm(v, v.transpose(1, 2))[:, self.pair_a, self.pair_b]
        if self.self_terms:
            return torch.cat([dots, torch.sum(v * v, dim=2)], dim=1)
        return dots


class _HeadNode(nn.Module):
    def forward(self, dense: Tensor, bags: List[Tensor], ins: List[Tensor]) -> Tensor:
        return ins[0].squeeze(1)


def _node_shape(n, ins, spec, names: List[str], dims: List[int]) -> Tuple[int, int, int]:
    """A node's output (width, fields, field_dim) as common/model_graph.cc
    computes it; fields 0: vectors of different widths."""
    kind = n.WhichOneof("layer")
    if kind == "dense":
        return (int(spec.num_dense), 1, int(spec.num_dense))
    if kind == "embeddings":
        widths = [dims[f] for f in _embedding_features(n, names)]
        same = all(w == widths[0] for w in widths)
        return (sum(widths), len(widths) if same else 0, widths[0] if same else 0)
    if kind == "concat":
        same = all(s[1] > 0 and s[2] == ins[0][2] for s in ins)
        return (sum(s[0] for s in ins), sum(s[1] for s in ins) if same else 0,
                ins[0][2] if same else 0)
    if kind in ("sum", "product", "cross"):
        return ins[0]
    if kind == "mlp":
        return (int(n.mlp.widths[-1]), 1, int(n.mlp.widths[-1]))
    if kind == "dot_interaction":
        f = ins[0][1]
        width = f * (f - 1) // 2 + (f if n.dot_interaction.self_terms else 0)
        return (width, 1, width)
    if kind in ("dot", "fm", "head"):
        return (1, 1, 1)
    raise HeraldError("INVALID_ARGUMENT", "model.graph node %s: no layer" % n.name)


def _embedding_features(n, names: List[str]) -> List[int]:
    """An embeddings node's features (indices into the model's features)."""
    return [names.index(f) for f in n.embeddings.features] or list(range(len(names)))


def _node_module(n, ins, names: List[str], params: DenseParameters) -> nn.Module:
    """A node's module; takes its parameters from `params`."""
    kind = n.WhichOneof("layer")
    if kind == "dense":
        return _DenseNode()
    if kind == "embeddings":
        return _EmbeddingsNode(_embedding_features(n, names))
    if kind == "concat":
        return _ConcatNode()
    if kind in ("sum", "product", "dot"):
        return {"sum": _SumNode, "product": _ProductNode, "dot": _DotNode}[kind]()
    if kind == "mlp":
        widths = [int(w) for w in n.mlp.widths]
        relu = n.mlp.activation == job_pb2.ACTIVATION_RELU
        layers: List[nn.Module] = []
        fan_in = ins[0][0]
        for k, w in enumerate(widths):
            layers.append(params.linear(fan_in, w))
            if relu and (k + 1 < len(widths) or n.mlp.activate_last):
                layers.append(nn.ReLU())
            fan_in = w
        return _MlpNode(nn.Sequential(*layers))
    if kind == "cross":
        width = ins[0][0]
        if n.cross.kind == job_pb2.CROSS_V2:
            stack = [CrossV2Layer(params, width, int(n.cross.rank)) for _ in range(n.cross.layers)]
        else:
            stack = [CrossLayer(params, width) for _ in range(n.cross.layers)]
        return _CrossNode(nn.ModuleList(stack))
    if kind == "fm":
        return _FmNode(ins[0][1], ins[0][2])
    if kind == "dot_interaction":
        return _DotInteractionNode(ins[0][1], ins[0][2], bool(n.dot_interaction.self_terms))
    if kind == "head":
        return _HeadNode()
    raise HeraldError("INVALID_ARGUMENT", "model.graph node %s: no layer" % n.name)


class GraphModel(nn.Module):
    """A model graph (model.graph, docs/configuration.md "Model graphs") over
    its features: the same layers, parameters and order as Herald's
    (worker/model/graph_model.cc), one module per node in that order.
    TorchScript-able. Output: (n,) for one head, (n, heads) for several, in
    the order the heads are listed; a binary head's click probabilities, a
    regression head's values."""

    # For TorchScript (lists that may hold empty lists).
    inputs: List[List[int]]
    table_features: List[List[int]]

    def __init__(self, spec, tables: List[Table], features: List[Tuple[int, int]],
                 dense: np.ndarray):
        super().__init__()
        self.tables = nn.ModuleList(tables)
        self.feature_pooling: List[int] = [p for _, p in features]
        self.table_features: List[List[int]] = [
            [f for f, (t, _) in enumerate(features) if t == table] for table in range(len(tables))]
        dims = [tables[t].dim for t, _ in features]
        names = _feature_names(spec)
        nodes = list(spec.model.graph.nodes)
        order = _graph_order(nodes)
        position = {nodes[i].name: k for k, i in enumerate(order)}
        params = DenseParameters(dense)
        self.inputs: List[List[int]] = [[position[x] for x in nodes[i].inputs] for i in order]
        shape = {}  # (width, fields, field_dim) per node name, in forward order
        for i in order:
            shape[nodes[i].name] = _node_shape(nodes[i], [shape[x] for x in nodes[i].inputs],
                                               spec, names, dims)
        # Parameters are laid out in the order the nodes are listed.
        built = {}
        for n in nodes:
            built[n.name] = _node_module(n, [shape[x] for x in n.inputs], names, params)
        self.nodes = nn.ModuleList([built[nodes[i].name] for i in order])
        labels = {c.name: c.label == job_pb2.LABEL_REGRESSION
                  for c in spec.data.schema.columns if c.role == job_pb2.COLUMN_LABEL}
        first = next(iter(labels), "label")
        heads = [n for n in nodes if n.WhichOneof("layer") == "head"]
        self.heads: List[int] = [position[h.name] for h in heads]
        self.head_regression: List[bool] = [labels.get(h.head.label or first, False)
                                            for h in heads]
        if params.at != len(dense):
            raise HeraldError("DATA_LOSS", "the export's dense parameters hold %d floats, the "
                              "graph takes %d" % (len(dense), params.at))

    def forward(self, dense: Tensor, keys: List[Tensor], offsets: List[Tensor],
                weights: Optional[List[Optional[Tensor]]] = None) -> Tensor:
        # As Model.forward: TorchScript passes no ModuleList to a shared function.
        bags: List[Tensor] = [dense for _ in range(len(self.feature_pooling))]
        for t, table in enumerate(self.tables):
            for f in self.table_features[t]:
                w: Optional[Tensor] = None
                if weights is not None:
                    w = weights[f]
                rows, bounds, w = table(keys[f], offsets[f], w)
                bags[f] = pool(rows, bounds, w, self.feature_pooling[f])
        outputs: List[Tensor] = []
        heads = self.head_outputs(dense, bags)
        for h in range(len(heads)):
            y = heads[h]
            outputs.append(y if self.head_regression[h] else torch.sigmoid(y))
        if len(outputs) == 1:
            return outputs[0]
        return torch.stack(outputs, dim=1)

    def head_outputs(self, dense: Tensor, bags: List[Tensor]) -> List[Tensor]:
        """Each head's raw output (a logit, or a regression value), in head
        order, from the dense features and every feature's pooled bag: what
        Herald's losses take (for training the graph in PyTorch)."""
        out: List[Tensor] = []
        for i, node in enumerate(self.nodes):
            out.append(node(dense, bags, [out[j] for j in self.inputs[i]]))
        return [out[h] for h in self.heads]


def _feature_names(spec) -> List[str]:
    """Each feature's name in the model's order (common/model_graph.h
    ModelFeaturesOf)."""
    if not spec.data.HasField("schema"):
        return [t.name for t in spec.tables]
    return [c.name for c in spec.data.schema.columns if c.role == job_pb2.COLUMN_SPARSE]


def _is_regression(spec) -> bool:
    """Whether the trained label is a regression one (common/trained_label.h)."""
    if not spec.data.HasField("schema"):
        return False
    for c in spec.data.schema.columns:
        if c.role == job_pb2.COLUMN_LABEL:
            return c.label == job_pb2.LABEL_REGRESSION
    return False


def _feature_tables(spec) -> List[Tuple[int, int]]:
    """(table, pooling) of each feature in the model's order
    (worker/model/model_factory.cc ShapeFromSpec)."""
    if not spec.data.HasField("schema"):
        return [(t, int(table.pooling)) for t, table in enumerate(spec.tables)]
    out = []
    names = [t.name for t in spec.tables]
    for c in spec.data.schema.columns:
        if c.role != job_pb2.COLUMN_SPARSE:
            continue
        name = c.table or c.name
        if name not in names:
            raise HeraldError("INVALID_ARGUMENT", "column '%s': table '%s' is not in the spec" %
                              (c.name, name))
        t = names.index(name)
        pooling = c.pooling if c.HasField("pooling") else spec.tables[t].pooling
        out.append((t, int(pooling)))
    return out


def _signed64(value: int) -> int:
    """A uint64 as the int64 of the same bits (TorchScript's int)."""
    return value - (1 << 64) if value >= (1 << 63) else value


def _init_scale(spec_table) -> float:
    """The table's initial values' scale as float32 arithmetic gives it
    (common/math/optimizer_spec.cc EffectiveInitScale)."""
    if spec_table.init_scale > 0:
        return float(np.float32(spec_table.init_scale))
    return float(np.float32(1.0) / np.sqrt(np.float32(spec_table.dim)))


def load_model(path) -> nn.Module:
    """The model exported to `path` (an export directory, or the newest of a
    chain of increments) as a torch.nn.Module in eval mode: a Model for the
    five built-in model kinds, a GraphModel for a model graph. Raises HeraldError as read_export does, and
    INVALID_ARGUMENT for a model it cannot build."""
    export = read_export(path)
    spec = export.spec
    tables = []
    for t, spec_table in enumerate(spec.tables):
        table = export.tables[t]
        tables.append(Table(t, np.asarray(table.keys, np.uint64), np.asarray(table.rows),
                            int(spec_table.dim), _signed64(spec.seed), _init_scale(spec_table),
                            spec_table.admission.min_count > 1
                            or spec_table.expiry.after_iterations > 0))
    dense = np.asarray(export.dense, np.float32)
    if spec.model.HasField("graph"):
        graph = GraphModel(spec, tables, _feature_tables(spec), dense)
        graph.eval()
        return graph
    model = Model(spec, tables, _feature_tables(spec), dense)
    model.eval()
    return model
