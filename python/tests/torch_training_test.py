"""An independent cross-check of Herald's training against PyTorch: a model
graph (a low-rank DCN-v2 beside an MLP, two heads: a click by cross-entropy
and a rating by squared error at weight 0.5) on CSV data with mean pooling,
SGD with a warm-up schedule and dense weight decay, trained by a real local
cluster (2 workers, policy herald), and the same graph trained here in
PyTorch from Herald's initial parameters (`heraldctl model
--initial_dense`, `herald.torch.initial_rows`) on the same batches. Every
iteration's loss, every final dense parameter and every embedding row agree
within float32 rounding. Without PyTorch it says SKIPPED."""

import os
import subprocess
import unittest

import numpy as np

import cluster
import herald

try:
    import torch
    import herald.torch as herald_torch
except ImportError as e:  # python3-torch is optional for the package
    torch = None
    WHY = "SKIPPED (no PyTorch): %s (deploy/install_deps.sh installs python3-torch)" % e
    print(WHY)

ROWS, BATCH, ITERATIONS, WARMUP = 640, 64, 10, 4
DENSE_LR, SPARSE_LR, WEIGHT_DECAY = 0.05, 0.1, 0.001

SPEC = """
name: "torch_cross_check"
model { graph {
  nodes { name: "dense" dense {} }
  nodes { name: "bags" embeddings {} }
  nodes { name: "x" inputs: ["dense", "bags"] concat {} }
  nodes { name: "cross" inputs: "x" cross { kind: CROSS_V2 layers: 2 rank: 4 } }
  nodes { name: "deep" inputs: "x" mlp { widths: [16] activate_last: true } }
  nodes { name: "both" inputs: ["cross", "deep"] concat {} }
  nodes { name: "click_out" inputs: "both" mlp { widths: [1] } }
  nodes { name: "rating_out" inputs: "both" mlp { widths: [8, 1] } }
  nodes { name: "click" inputs: "click_out" head { label: "click" } }
  nodes { name: "rating" inputs: "rating_out" head { label: "rating" loss_weight: 0.5 } }
} }
tables { name: "user" dim: 8 }
tables { name: "item" dim: 8 }
tables { name: "tags" dim: 8 pooling: POOLING_MEAN }
dense_optimizer { kind: OPTIMIZER_SGD learning_rate: %g weight_decay: %g
                  schedule { warmup_iterations: %d } }
sparse_optimizer { kind: OPTIMIZER_SGD learning_rate: %g schedule { warmup_iterations: %d } }
data {
  format: DATA_FORMAT_CSV
  paths: "%s"
  shuffle_buffer: 0
  schema {
    columns { name: "click" role: COLUMN_LABEL }
    columns { name: "rating" role: COLUMN_LABEL label: LABEL_REGRESSION }
    columns { name: "x1" role: COLUMN_DENSE }
    columns { name: "x2" role: COLUMN_DENSE }
    columns { name: "user" role: COLUMN_SPARSE ids: IDS_DECIMAL }
    columns { name: "item" role: COLUMN_SPARSE ids: IDS_DECIMAL }
    columns { name: "tags" role: COLUMN_SPARSE ids: IDS_DECIMAL multi_hot_separator: "|" }
  }
}
scheduling { policy: POLICY_HERALD cache_fraction: 0.5 }
global_batch_size: %d
iterations: %d
seed: 5
num_workers: 2
"""


def write_data(path):
    """Rows of exact binary fractions; returns them parsed as the model sees
    them: labels (n, 2), dense (n, 2) and per feature each sample's keys."""
    rng = np.random.default_rng(3)
    labels, dense, keys = [], [], [[], [], []]
    with open(path, "w") as f:
        f.write("click,rating,x1,x2,user,item,tags\n")
        for _ in range(ROWS):
            user, item = int(rng.integers(1, 41)), int(rng.integers(1, 61))
            tags = [int(t) for t in rng.integers(100, 121, size=int(rng.integers(0, 4)))]
            x1, x2 = rng.integers(-8, 9) / 8.0, rng.integers(0, 9) / 4.0
            click = 1.0 if (user + item) % 3 == 0 or x1 > 0.5 else 0.0
            rating = float(rng.integers(0, 11)) / 2.0
            f.write("%g,%g,%g,%g,%d,%d,%s\n" % (click, rating, x1, x2, user, item,
                                                "|".join(str(t) for t in tags)))
            labels.append([click, rating])
            dense.append([x1, x2])
            keys[0].append([user])
            keys[1].append([item])
            keys[2].append(tags)
    return np.array(labels, np.float32), np.array(dense, np.float32), keys


def rate(base, iteration):
    """Herald's warm-up (common/math/learning_rate.h), rounded to float32."""
    if iteration < WARMUP:
        return float(np.float32(base * (iteration + 1) / WARMUP))
    return float(np.float32(base))


@unittest.skipIf(torch is None, WHY if torch is None else "")
class TorchTrainingTest(unittest.TestCase):
    def test_pytorch_trains_the_same_graph_to_the_same_parameters(self):
        with cluster.LocalCluster() as c:
            data = os.path.join(c.dir, "data.csv")
            labels, dense, keys = write_data(data)
            spec = os.path.join(c.dir, "spec.txt")
            with open(spec, "w") as f:
                f.write(SPEC % (DENSE_LR, WEIGHT_DECAY, WARMUP, SPARSE_LR, WARMUP, data, BATCH,
                                ITERATIONS))
            client = herald.Client(c.address, token_file=c.token_file)
            job = client.submit(spec)
            final = client.wait(job)
            self.assertEqual(final.state, herald._proto.scheduler_pb2.JOB_SUCCEEDED, c.logs())
            herald_losses = client.history(job, numpy=True)["loss"]
            export_dir = os.path.join(c.dir, "export")
            client.export(job, export_dir)
            client.close()
            initial = os.path.join(c.dir, "initial.f32")
            subprocess.run([cluster.HERALDCTL, "model", spec, "--initial_dense", initial],
                           check=True, capture_output=True, timeout=300)
            initial_dense = np.fromfile(initial, dtype=np.float32)
            exported = herald.read_export(export_dir)
            self.check(exported, initial_dense, herald_losses, labels, dense, keys)

    def check(self, exported, initial_dense, herald_losses, labels, dense, keys):
        spec = exported.spec  # as the scheduler resolved it: num_dense 2
        empty = [herald_torch.Table(t, np.zeros(0, np.uint64), np.zeros((0, 8), np.float32), 8,
                                    spec.seed, herald_torch._init_scale(spec.tables[t]))
                 for t in range(3)]
        model = herald_torch.GraphModel(spec, empty, herald_torch._feature_tables(spec),
                                        initial_dense.copy())
        params = [(n, t) for n, t in model.state_dict(keep_vars=True).items()
                  if not n.startswith("tables.") and t.dtype == torch.float32]
        for _, t in params:
            t.requires_grad_(True)
        start = {n: t.detach().clone() for n, t in params}
        # Every key's row, from Herald's initial values.
        rows = [{} for _ in range(3)]
        for f in range(3):
            for sample in keys[f]:
                for k in sample:
                    if k not in rows[f]:
                        rows[f][k] = herald_torch.initial_rows(
                            spec.seed, f, torch.tensor([k]), 8,
                            herald_torch._init_scale(spec.tables[f]))[0]
        poolings = [0, 0, 1]  # sum, sum, mean (tables[2].pooling)
        losses = []
        for it in range(ITERATIONS):
            batch = range(it * BATCH, (it + 1) * BATCH)
            leaves, bags = [], []
            for f in range(3):
                order = list(dict.fromkeys(k for s in batch for k in keys[f][s]))
                leaf = torch.stack([rows[f][k] for k in order]).requires_grad_(True)
                at = {k: i for i, k in enumerate(order)}
                index = torch.tensor([at[k] for s in batch for k in keys[f][s]], dtype=torch.int64)
                offsets = torch.tensor(np.cumsum([0] + [len(keys[f][s]) for s in batch]),
                                       dtype=torch.int64)
                bags.append(herald_torch.pool(leaf[index], offsets, None, poolings[f]))
                leaves.append((order, leaf))
            click_out, rating_out = model.head_outputs(torch.from_numpy(dense[batch]), bags)
            y = torch.from_numpy(labels[batch])
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(
                click_out, y[:, 0], reduction="sum") +
                0.5 * torch.sum((rating_out - y[:, 1]) ** 2)) / BATCH
            for _, t in params:
                t.grad = None
            loss.backward()
            losses.append(loss.item())
            with torch.no_grad():
                lr = rate(DENSE_LR, it)
                for _, t in params:
                    t -= lr * (t.grad + WEIGHT_DECAY * t)
                lr = rate(SPARSE_LR, it)
                for f, (order, leaf) in enumerate(leaves):
                    updated = leaf - lr * leaf.grad
                    for i, k in enumerate(order):
                        rows[f][k] = updated[i].detach()
        np.testing.assert_allclose(losses, herald_losses[:ITERATIONS], rtol=1e-5,
                                   err_msg="losses per iteration")
        herald_model = herald_torch.GraphModel(spec, empty, herald_torch._feature_tables(spec),
                                               np.asarray(exported.dense, np.float32))
        theirs = herald_model.state_dict()
        moved = 0.0
        for name, t in params:
            np.testing.assert_allclose(t.detach().numpy(), theirs[name].numpy(), rtol=1e-4,
                                       atol=2e-6, err_msg=name)
            moved = max(moved, float((t.detach() - start[name]).abs().max()))
        self.assertGreater(moved, 1e-3, "training moved no dense parameter")
        for f in range(3):
            table = exported.tables[f]
            mine = np.stack([rows[f][int(k)].numpy() for k in table.keys])
            self.assertEqual(len(table.keys), len(rows[f]))
            np.testing.assert_allclose(mine, np.asarray(table.rows)[:, :8], rtol=1e-4, atol=2e-6,
                                       err_msg="table %d" % f)


if __name__ == "__main__":
    unittest.main()
