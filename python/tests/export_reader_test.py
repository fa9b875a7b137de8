"""herald.read_export against the C++ reader (model_reader --dump) on real
exports: a whole one and a chain of increments, every key, row and dense
parameter bit for bit (half the tables with row expiry, so the increments
delete rows too); damaged and missing files raise HeraldError naming the
file."""

import os
import shutil
import subprocess
import sys
import unittest

import numpy as np

import cluster
import herald

MODEL_READER = cluster.binary("tools/model_reader")


def cpp_dump(path):
    out = subprocess.run([MODEL_READER, path, "--dump"], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    lines = [l for l in out.splitlines() if l.startswith("dense ") or l[:1].isdigit()]
    dense = np.array([float.fromhex(v) for v in lines[0].split()[1:]], dtype=np.float32)
    rows = {}
    for line in lines[1:]:
        parts = line.split()
        if len(parts) < 3:
            continue  # a summary line ("table 0: ...") has no row
        if parts[1].endswith(":"):
            continue
        rows[(int(parts[0]), int(parts[1]))] = np.array([float.fromhex(v) for v in parts[2:]],
                                                        dtype=np.float32)
    return dense, rows


def py_rows(model):
    rows = {}
    for t in model.tables:
        for key, row in zip(t.keys, t.rows):
            rows[(t.id, int(key))] = row
    return rows


class ExportReaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cluster.LocalCluster()
        cls.work = cls.cluster.dir
        data = cluster.generate_data(cls.work)
        spec_path = os.path.join(cls.work, "job.txt")
        exports = os.path.join(cls.work, "periodic")
        spec = cluster.generated_spec(data, iterations=8, name="exported")
        for i in range(2, 27, 2):  # row expiry on every other table
            spec = spec.replace('name: "C%d" dim: 4 }' % i,
                                'name: "C%d" dim: 4 expiry { after_iterations: 2 } }' % i)
        with open(spec_path, "w") as f:
            f.write(spec +
                    'checkpoint { dir: "%s" every_iterations: 2 }\n'
                    'exports { dir: "%s" every_iterations: 4 }\n' %
                    (os.path.join(cls.work, "ckpt"), exports))
        cls.client = herald.Client(cls.cluster.address, token_file=cls.cluster.token_file)
        cls.job = cls.client.submit(spec_path)
        final = cls.client.wait(cls.job)
        assert final.state == herald._proto.scheduler_pb2.JOB_SUCCEEDED, (final, cls.cluster.logs())
        cls.whole = os.path.join(cls.work, "whole")
        cls.client.export(cls.job, cls.whole)
        job_exports = os.path.join(exports, cls.job)
        cls.increments = sorted(os.path.join(job_exports, d)
                                for d in os.listdir(job_exports) if d.startswith("iter-"))
        with open(os.path.join(job_exports, "LATEST")) as f:
            cls.latest = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.stop()

    def assert_same_as_cpp(self, path):
        model = herald.read_export(path)
        dense, rows = cpp_dump(path)
        np.testing.assert_array_equal(model.dense.view(np.uint32), dense.view(np.uint32))
        mine = py_rows(model)
        self.assertEqual(set(mine), set(rows))
        for k, row in rows.items():
            np.testing.assert_array_equal(mine[k].view(np.uint32), row.view(np.uint32), err_msg=str(k))
        return model

    def test_a_whole_export_equals_the_cpp_reader(self):
        model = self.assert_same_as_cpp(self.whole)
        self.assertEqual(model.job_id, self.job)
        self.assertEqual(model.iterations, 8)
        self.assertEqual(len(model.tables), 26)
        self.assertEqual(model.tables[0].name, "C1")
        t = model.tables[0]
        self.assertEqual(t.embeddings.shape, (len(t), t.dim))
        key = int(t.keys[0])
        np.testing.assert_array_equal(t.row(key), t.rows[0])
        self.assertIsNone(t.row(2**63 + 12345))

    def test_a_chain_of_increments_reads_as_the_whole_model(self):
        self.assertGreaterEqual(len(self.increments), 2)
        last = self.increments[-1]
        chained = self.assert_same_as_cpp(last)
        self.assertEqual(len(chained.chain), len(self.increments))
        self.assertGreater(chained.manifest.deleted_rows, 0)  # expired rows, deleted
        self.assertEqual(self.latest, os.path.basename(last) + "\n")  # LATEST names the newest
        whole = herald.read_export(self.whole)
        np.testing.assert_array_equal(chained.dense, whole.dense)
        self.assertEqual(py_rows(chained).keys(), py_rows(whole).keys())
        for k, row in py_rows(whole).items():
            np.testing.assert_array_equal(py_rows(chained)[k], row)

    def test_damaged_and_missing_files_name_the_file(self):
        broken = os.path.join(self.work, "broken")
        shutil.copytree(self.whole, broken)
        with self.assertRaises(herald.HeraldError) as e:
            herald.read_export(os.path.join(self.work, "nowhere"))
        self.assertEqual(e.exception.code, "NOT_FOUND")
        shard = next(os.path.join(d, f) for d, _, files in os.walk(broken)
                     for f in files if f.endswith(".hsf"))
        size = os.path.getsize(shard)
        with open(shard, "r+b") as f:
            f.truncate(size - 7)
        with self.assertRaises(herald.HeraldError) as e:
            herald.read_export(broken)
        self.assertEqual(e.exception.code, "DATA_LOSS")
        self.assertIn(shard, str(e.exception))
        with open(os.path.join(broken, "dense.f32"), "r+b") as f:
            f.seek(12)
            f.write(b"\x01\x02\x03\x04")
        with self.assertRaises(herald.HeraldError) as e:
            herald.read_export(broken)
        self.assertIn("dense.f32", str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
