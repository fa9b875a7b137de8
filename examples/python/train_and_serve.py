#!/usr/bin/python3
"""Train a model with Herald, then serve it in PyTorch, all from Python.

Submits a job to a running scheduler, watches it to the end, exports the
model and copies it to this machine, loads it into PyTorch, scores the
job's held-out samples (as `heraldctl evaluate --predictions` wrote them)
and saves a TorchScript file that serves without Herald.

    PYTHONPATH=/opt/herald/share/herald/python /usr/bin/python3 \
        examples/python/train_and_serve.py --scheduler 127.0.0.1:7000 \
        --token-file /etc/herald/token --spec deploy/examples/wide_and_deep.txt \
        --out /tmp/ctr

Needs Debian's python3-grpcio, python3-protobuf, python3-numpy and
python3-torch, and `heraldctl` on the PATH (or --heraldctl) for the
held-out inputs.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import torch

import herald
import herald.torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", required=True, help="the scheduler's host:port")
    parser.add_argument("--token-file", required=True, help="the cluster token")
    parser.add_argument("--spec", required=True, help="a job spec (text format)")
    parser.add_argument("--out", required=True, help="a local directory for the model")
    parser.add_argument("--heraldctl", default="heraldctl")
    args = parser.parse_args()

    client = herald.Client(args.scheduler, token_file=args.token_file)
    job = client.submit(args.spec)
    print("submitted", job)
    for status in client.watch(job):
        p = status.progress
        print("  iteration %d, loss %.4f" % (p.iteration, p.loss))
    final = client.status(job)
    if final.state != herald._proto.scheduler_pb2.JOB_SUCCEEDED:
        sys.exit("job %s ended %s: %s" % (job, herald._proto.scheduler_pb2.JobState.Name(final.state),
                                          final.reason))
    history = client.history(job, numpy=True)
    print("trained %d iterations" % len(history["iteration"]))

    # The export is written on the scheduler's host; copy it here.
    os.makedirs(args.out, exist_ok=True)
    model_dir = os.path.join(args.out, "model")
    client.export(job, model_dir + "-on-scheduler")
    client.download_export(job, model_dir)
    client.close()

    # Herald's own scoring of the held-out split, with each sample's inputs.
    predictions = os.path.join(args.out, "predictions.tsv")
    subprocess.run([args.heraldctl, "evaluate", "--model", model_dir, "--predictions",
                    predictions], check=True)
    held_out = herald.read_predictions(predictions)

    model = herald.torch.load_model(model_dir)
    scripted = torch.jit.script(model)
    torch.jit.save(scripted, os.path.join(args.out, "model.pt"))
    served = torch.jit.load(os.path.join(args.out, "model.pt"))
    with torch.no_grad():
        scores = served(torch.from_numpy(held_out.dense),
                        [torch.from_numpy(k) for k, _, _ in held_out.bags],
                        [torch.from_numpy(o) for _, o, _ in held_out.bags],
                        [None if w is None else torch.from_numpy(w) for _, _, w in held_out.bags])
    gap = float(np.max(np.abs(scores.numpy() - held_out.predictions)))
    print("PyTorch scored %d held-out samples; largest difference from Herald's: %.2g" %
          (len(held_out), gap))
    print("TorchScript model:", os.path.join(args.out, "model.pt"))


if __name__ == "__main__":
    main()
