"""A real local cluster for the Python tests: herald_scheduler, PS shards
and CPU workers on 127.0.0.1 (ports chosen by the kernel), the binaries
from the test's runfiles, a fresh cluster token; stopped on exit."""

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time

ROOT = os.environ.get("HERALD_RUNFILES", os.getcwd())


def binary(path):
    return os.path.join(ROOT, path)


HERALDCTL = binary("cli/heraldctl")


class LocalCluster:
    def __init__(self, shards=2, workers=2):
        self.dir = tempfile.mkdtemp(prefix="herald-py-")
        self.token_file = os.path.join(self.dir, "token")
        with open(self.token_file, "w") as f:
            f.write(secrets.token_hex(32))
        os.chmod(self.token_file, 0o600)
        self.procs = []
        port_file = os.path.join(self.dir, "scheduler.port")
        self._start("scheduler", [binary("scheduler/herald_scheduler"), "--listen", "127.0.0.1:0",
                                  "--port-file", port_file])
        self.address = "127.0.0.1:%s" % self._wait_for(port_file, "scheduler")
        for shard in range(shards):
            self._start("ps%d" % shard, [binary("ps_server/herald_ps"), "--listen", "127.0.0.1:0",
                                         "--shard", str(shard), "--scheduler", self.address])
        for w in range(workers):
            self._start("worker%d" % w, [binary("worker/herald_worker"), "--scheduler",
                                         self.address, "--device", "cpu", "--listen",
                                         "127.0.0.1:0"])
        self._wait_for_nodes(shards + workers)

    def _start(self, name, args):
        log = open(os.path.join(self.dir, name + ".log"), "w")
        args = args + ["--token-file", self.token_file]
        self.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL))

    def _wait_for(self, path, name):
        for _ in range(600):  # bounded: 60 s
            if os.path.exists(path) and open(path).read().strip():
                return open(path).read().strip()
            time.sleep(0.1)
        raise RuntimeError("%s did not start: %s" % (name, self.logs()))

    def _wait_for_nodes(self, count):
        for _ in range(600):
            out = self.ctl(["nodes"], check=False)
            if out.count(" alive") >= count:
                return
            time.sleep(0.1)
        raise RuntimeError("nodes did not register: %s" % self.logs())

    def ctl(self, args, check=True):
        result = subprocess.run([HERALDCTL] + args + ["--scheduler", self.address,
                                                      "--token-file", self.token_file],
                                capture_output=True, text=True, timeout=300)
        if check and result.returncode != 0:
            raise RuntimeError("heraldctl %s: %s" % (args, result.stdout + result.stderr))
        return result.stdout

    def logs(self):
        out = []
        for name in sorted(os.listdir(self.dir)):
            if name.endswith(".log"):
                with open(os.path.join(self.dir, name)) as f:
                    out.append("--- %s\n%s" % (name, f.read()[-2000:]))
        return "\n".join(out)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def generated_spec(data_path, iterations=None, name="py", workers=2):
    """A small Wide&Deep job on generated Criteo-shaped data."""
    return """
name: "%s"
model { kind: MODEL_WIDE_AND_DEEP top_mlp: [16, 8] }
num_dense: 13
%s
global_batch_size: 256
num_workers: %d
epochs: 1
%s
seed: 7
data { format: DATA_FORMAT_HERALD_BINARY paths: "%s" eval_fraction: 0.1 }
eval { every_iterations: 5 batch_size: 128 }
scheduling { policy: POLICY_HERALD cache_fraction: 0.2 }
dense_optimizer { kind: OPTIMIZER_ADAM learning_rate: 0.001 }
sparse_optimizer { kind: OPTIMIZER_ADAGRAD learning_rate: 0.05 }
""" % (name, "\n".join('tables { name: "C%d" dim: 4 }' % (i + 1) for i in range(26)), workers,
       "iterations: %d" % iterations if iterations else "", data_path)


def generate_data(directory, rows=20000):
    path = os.path.join(directory, "data.bin")
    subprocess.run([HERALDCTL, "gen-data", "--rows", str(rows), "--seed", "1",
                    "--cardinality_scale", "0.01", "--format", "bin", "--out", path],
                   check=True, capture_output=True, timeout=300)
    return path
