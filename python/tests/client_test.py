"""herald.Client on a real local cluster: submit, watch to success, history,
export, nodes, and the cancel of a second job, all from Python; bad input
(a wrong token, an unreachable scheduler, a bad spec, a scheduler of
another wire version) raises HeraldError at once, never hangs."""

import os
import time
import unittest

import cluster
import herald
from herald._proto import job_pb2, scheduler_pb2


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cluster.LocalCluster()
        cls.data = cluster.generate_data(cls.cluster.dir)
        cls.client = herald.Client(cls.cluster.address, token_file=cls.cluster.token_file)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.stop()

    def test_submit_watch_history_export_from_python(self):
        spec_path = os.path.join(self.cluster.dir, "job.txt")
        with open(spec_path, "w") as f:
            f.write(cluster.generated_spec(self.data, iterations=10, name="py-train"))
        job = self.client.submit(spec_path)
        seen = [s for s in self.client.watch(job)]
        final = seen[-1]
        self.assertEqual(final.state, scheduler_pb2.JOB_SUCCEEDED, final.reason + self.cluster.logs())
        self.assertEqual(final.progress.iteration, 10)
        iterations = [s.progress.iteration for s in seen]
        self.assertEqual(iterations, sorted(iterations))  # progress only moves forward
        self.assertEqual(self.client.status(job).state, scheduler_pb2.JOB_SUCCEEDED)
        # The history: dict rows, and NumPy columns; the evaluations in it.
        rows = self.client.history(job)
        self.assertEqual([r["iteration"] for r in rows if r["workers"]], list(range(10)))
        self.assertNotIn("eval_auc", rows[0])  # no evaluation after iteration 0
        evals = [r for r in rows if r.get("eval_labels")]
        self.assertTrue(evals)
        self.assertEqual(evals[-1]["eval_labels"][0]["label"], "label")
        self.assertEqual(evals[-1]["eval_auc"], final.progress.eval_auc)
        columns = self.client.history(job, numpy=True)
        self.assertEqual(columns["loss"].shape, (len(rows),))
        self.assertAlmostEqual(float(columns["loss"][9]), final.progress.loss, places=6)
        # The export, read back.
        out = os.path.join(self.cluster.dir, "model")
        response = self.client.export(job, out)
        self.assertGreater(response.rows, 0)
        model = herald.read_export(out)
        self.assertEqual(model.iterations, 10)
        self.assertEqual(sum(len(t) for t in model.tables), response.rows)
        # The export copied over the wire equals the one on the scheduler's
        # host file for file; asked by directory or as the newest export.
        copy = os.path.join(self.cluster.dir, "downloaded")
        self.assertEqual(self.client.download_export(job, copy), os.path.abspath(out))
        copied = herald.read_export(copy)
        self.assertEqual(copied.manifest, model.manifest)
        for a, b in zip(copied.tables, model.tables):
            self.assertEqual(a.keys.tolist(), b.keys.tolist())
            self.assertEqual(a.rows.tobytes(), b.rows.tobytes())
        self.assertEqual(copied.dense.tobytes(), model.dense.tobytes())
        with self.assertRaises(herald.HeraldError) as e:
            self.client.download_export(job, copy)
        self.assertEqual(e.exception.code, "ALREADY_EXISTS")
        again = os.path.join(self.cluster.dir, "again")
        self.client.download_export(job, again, remote_dir=os.path.abspath(out))
        # heraldctl export --download: the same files, byte for byte.
        by_ctl = os.path.join(self.cluster.dir, "by-heraldctl")
        self.assertIn("downloaded", self.cluster.ctl(["export", job, "--download", by_ctl]))
        for d, _, files in os.walk(out):
            for name in files:
                rel = os.path.relpath(os.path.join(d, name), out)
                with open(os.path.join(out, rel), "rb") as a, open(os.path.join(by_ctl, rel), "rb") as b:
                    self.assertEqual(a.read(), b.read(), rel)
        with self.assertRaises(herald.HeraldError) as e:
            self.client.download_export(job, os.path.join(self.cluster.dir, "x"),
                                        remote_dir=self.cluster.dir)
        self.assertEqual(e.exception.code, "NOT_FOUND")
        with self.assertRaises(herald.HeraldError) as e:
            self.client.download_export("job-404", os.path.join(self.cluster.dir, "y"))
        self.assertEqual(e.exception.code, "NOT_FOUND")
        # The same spec as a message and as text.
        spec = herald.parse_spec(spec_path)
        self.assertIsInstance(spec, job_pb2.JobSpec)
        with open(spec_path) as f:
            self.assertEqual(herald.parse_spec(f.read()), spec)
        roles = sorted(scheduler_pb2.NodeRole.Name(n.role) for n in self.client.nodes())
        self.assertEqual(roles.count("NODE_ROLE_WORKER"), 2)

    def test_cancel_a_running_job(self):
        spec = herald.parse_spec(cluster.generated_spec(self.data, name="py-cancel"))
        spec.iterations = 100000
        spec.ClearField("epochs")
        job = self.client.submit(spec)
        cancelled = False
        for status in self.client.watch(job):
            if status.progress.iteration >= 2 and not cancelled:
                self.client.cancel(job)
                cancelled = True
        self.assertEqual(status.state, scheduler_pb2.JOB_CANCELLED)

    def test_bad_input_raises_at_once(self):
        start = time.time()
        wrong = herald.Client(self.cluster.address, token="not-the-token", timeout=5)
        with self.assertRaises(herald.HeraldError) as e:
            wrong.nodes()
        self.assertEqual(e.exception.code, "UNAUTHENTICATED")
        unreachable = herald.Client("127.0.0.1:1", token="x", timeout=2)
        with self.assertRaises(herald.HeraldError) as e:
            unreachable.jobs()
        self.assertIn(e.exception.code, ("UNAVAILABLE", "DEADLINE_EXCEEDED"))
        with self.assertRaises(herald.HeraldError) as e:
            self.client.submit('name: "x" no_such_field: 3')
        self.assertEqual(e.exception.code, "INVALID_ARGUMENT")
        with self.assertRaises(herald.HeraldError) as e:
            self.client.status("job-does-not-exist")
        self.assertEqual(e.exception.code, "NOT_FOUND")
        bad = herald.parse_spec(cluster.generated_spec(self.data, name="bad"))
        bad.global_batch_size = 0
        with self.assertRaises(herald.HeraldError) as e:
            self.client.submit(bad)
        self.assertEqual(e.exception.code, "INVALID_ARGUMENT")
        self.assertIn("global_batch_size", e.exception.message)
        self.assertLess(time.time() - start, 30)

    def test_a_scheduler_of_another_wire_version_is_refused(self):
        other = herald.Client(self.cluster.address, token_file=self.cluster.token_file)
        real = herald.client._version.WIRE_VERSION
        herald.client._version.WIRE_VERSION = real + 1
        try:
            with self.assertRaises(herald.WireVersionError) as e:
                other.jobs()
            self.assertIn("speaking wire version %d" % real, str(e.exception))
            self.assertIn("speaking wire version %d" % (real + 1), str(e.exception))
        finally:
            herald.client._version.WIRE_VERSION = real
            other.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
