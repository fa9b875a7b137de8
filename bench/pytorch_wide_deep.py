#!/usr/bin/env python3
"""The PyTorch baseline of bench/worker_bench.cc: the same Wide&Deep (sum
embedding bags, a linear wide part and a ReLU MLP over [dense | bags], one
logit, BCE with logits), the same shapes, SGD on dense and sparse parameters,
trained on the CPU with a warm in-memory table. Prints one line:
    samples_per_second=<float>
Run by worker_bench; needs python3-torch (Debian), never run in CI."""
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
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    width = a.dense + a.tables * a.dim
    bags = torch.nn.ModuleList(
        [torch.nn.EmbeddingBag(a.rows, a.dim, mode="sum", sparse=True) for _ in range(a.tables)])
    wide = torch.nn.Linear(width, 1)
    layers, inp = [], width
    for w in [int(x) for x in a.mlp.split(",")]:
        layers += [torch.nn.Linear(inp, w), torch.nn.ReLU()]
        inp = w
    layers.append(torch.nn.Linear(inp, 1))
    deep = torch.nn.Sequential(*layers)
    dense_opt = torch.optim.SGD(list(wide.parameters()) + list(deep.parameters()), lr=0.01)
    sparse_opt = torch.optim.SGD(list(bags.parameters()), lr=0.01)
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="mean")

    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(4):
        keys = [torch.randint(0, a.rows, (a.batch,), generator=g) for _ in range(a.tables)]
        offsets = torch.arange(a.batch)
        dense = torch.rand(a.batch, a.dense, generator=g)
        labels = (torch.rand(a.batch, generator=g) < 0.25).float()
        batches.append((keys, offsets, dense, labels))

    def step(batch):
        keys, offsets, dense, labels = batch
        x = torch.cat([dense] + [bag(k, offsets) for bag, k in zip(bags, keys)], dim=1)
        logit = (wide(x) + deep(x)).squeeze(1)
        loss = loss_fn(logit, labels)
        dense_opt.zero_grad()
        sparse_opt.zero_grad()
        loss.backward()
        dense_opt.step()
        sparse_opt.step()

    for i in range(a.warmup):
        step(batches[i % len(batches)])
    start = time.perf_counter()
    for i in range(a.iterations):
        step(batches[i % len(batches)])
    elapsed = time.perf_counter() - start
    print(f"samples_per_second={a.iterations * a.batch / elapsed:.1f}")


if __name__ == "__main__":
    main()
