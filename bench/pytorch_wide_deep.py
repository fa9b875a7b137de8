#!/usr/bin/env python3
"""The PyTorch baseline of bench/worker_bench.cc: the same Wide&Deep (sum
embedding bags, a linear wide part and a ReLU MLP over [dense | bags], one
logit, BCE with logits), the same shapes, SGD on dense and sparse parameters,
with warm tables resident where the model runs.

--device cpu (Debian's python3-torch, `--threads` cores) or cuda:N (a GPU
node's PyTorch). --layout bags: one nn.EmbeddingBag per table; fused: one
table holding every table's rows at per-table offsets, one bag lookup for all
tables (what TorchRec / FBGEMM's table-batched embedding do). Prints one
line:
    samples_per_second=<float>
Run by worker_bench; never run in CI."""
import argparse
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--tables", type=int, default=26)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--rows", type=int, default=10000)
    p.add_argument("--dense", type=int, default=13)
    p.add_argument("--mlp", default="512,256,128")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--layout", choices=["bags", "fused"], default="bags")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    fused = a.layout == "fused"
    width = a.dense + a.tables * a.dim
    if fused:
        bags = torch.nn.EmbeddingBag(a.rows * a.tables, a.dim, mode="sum", sparse=True)
    else:
        bags = torch.nn.ModuleList(
            [torch.nn.EmbeddingBag(a.rows, a.dim, mode="sum", sparse=True)
             for _ in range(a.tables)])
    wide = torch.nn.Linear(width, 1)
    layers, inp = [], width
    for w in [int(x) for x in a.mlp.split(",")]:
        layers += [torch.nn.Linear(inp, w), torch.nn.ReLU()]
        inp = w
    layers.append(torch.nn.Linear(inp, 1))
    deep = torch.nn.Sequential(*layers)
    bags, wide, deep = bags.to(dev), wide.to(dev), deep.to(dev)
    dense_opt = torch.optim.SGD(list(wide.parameters()) + list(deep.parameters()), lr=0.01)
    sparse_opt = torch.optim.SGD(list(bags.parameters()), lr=0.01)
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="mean")

    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(4):
        keys = [torch.randint(0, a.rows, (a.batch,), generator=g) for _ in range(a.tables)]
        dense = torch.rand(a.batch, a.dense, generator=g).to(dev)
        labels = (torch.rand(a.batch, generator=g) < 0.25).float().to(dev)
        if fused:  # sample-major: sample i's bag of table t holds its key + t * rows
            flat = torch.stack([keys[t] + t * a.rows for t in range(a.tables)], dim=1)
            batches.append((flat.reshape(-1).to(dev),
                            torch.arange(a.batch * a.tables).to(dev), dense, labels))
        else:
            batches.append(([k.to(dev) for k in keys], torch.arange(a.batch).to(dev), dense,
                            labels))

    def step(batch):
        keys, offsets, dense, labels = batch
        if fused:
            x = torch.cat([dense, bags(keys, offsets).reshape(a.batch, a.tables * a.dim)], dim=1)
        else:
            x = torch.cat([dense] + [bag(k, offsets) for bag, k in zip(bags, keys)], dim=1)
        logit = (wide(x) + deep(x)).squeeze(1)
        loss = loss_fn(logit, labels)
        dense_opt.zero_grad()
        sparse_opt.zero_grad()
        loss.backward()
        dense_opt.step()
        sparse_opt.step()

    def synchronize():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    for i in range(a.warmup):
        step(batches[i % len(batches)])
    synchronize()
    start = time.perf_counter()
    for i in range(a.iterations):
        step(batches[i % len(batches)])
    synchronize()
    elapsed = time.perf_counter() - start
    print(f"samples_per_second={a.iterations * a.batch / elapsed:.1f}")


if __name__ == "__main__":
    main()
