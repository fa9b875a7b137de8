"""herald.torch.load_model against Herald's own scoring: each of the five
built-in models trained on a real local cluster, exported, scored by
`heraldctl evaluate --predictions` and by the PyTorch module on the same
held-out inputs (each sample within 1e-5, the same AUC to 4 decimals),
also after a TorchScript save and load; and a CSV schema job with a
regression label, per-id weights, two features sharing a table, mean and
sqrt-n pooling and string ids (the same RMSE to 4 decimals); and a model
graph of every layer kind with two heads on that data (a rating and a
click: each head's predictions within 1e-5, also after a TorchScript save
and load, its RMSE or AUC to 4 decimals). Held-out
samples hold ids the model never trained, so the module's initial rows
are checked too. Without PyTorch it says SKIPPED."""

import json
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

MODELS = {
    "wide_and_deep": "model { kind: MODEL_WIDE_AND_DEEP top_mlp: [16, 8] }",
    "deepfm": "model { kind: MODEL_DEEPFM top_mlp: [16, 8] }",
    "dcn": "model { kind: MODEL_DCN top_mlp: [16, 8] cross_layers: 2 }",
    "ncf": "model { kind: MODEL_NCF top_mlp: [16, 8] }",
    "dlrm": "model { kind: MODEL_DLRM top_mlp: [16, 8] bottom_mlp: [8, 4] }",
}


def auc(labels, scores):
    """The AUC of binary labels (ties share their rank)."""
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1
        i = j + 1
    positives = labels > 0.5
    p, n = positives.sum(), (~positives).sum()
    return (ranks[positives].sum() - p * (p + 1) / 2.0) / (p * n)


SCHEMA = """
columns { name: "rating" role: COLUMN_LABEL label: LABEL_REGRESSION }
columns { name: "click" role: COLUMN_LABEL }
columns { name: "price" role: COLUMN_DENSE transform: TRANSFORM_AFFINE scale: 0.5 shift: -1 }
columns { name: "user" role: COLUMN_SPARSE ids: IDS_STRING }
columns { name: "item" role: COLUMN_SPARSE ids: IDS_DECIMAL }
columns { name: "viewed" role: COLUMN_SPARSE ids: IDS_DECIMAL multi_hot_separator: "|"
          table: "item" pooling: POOLING_SQRT_N }
columns { name: "genres" role: COLUMN_SPARSE multi_hot_separator: "|" weight_separator: ":" }
"""

# Every layer kind of a model graph, and two heads: the rating (squared
# error, weight 0.5) and the click (cross-entropy).
GRAPH_MODEL = """model { graph {
  nodes { name: "dense" dense {} }
  nodes { name: "bags" embeddings {} }
  nodes { name: "x" inputs: ["dense", "bags"] concat {} }
  nodes { name: "cross" inputs: "x" cross { kind: CROSS_V2 layers: 2 rank: 4 } }
  nodes { name: "v1" inputs: "x" cross { layers: 1 } }
  nodes { name: "uiv" embeddings { features: ["user", "item", "viewed"] } }
  nodes { name: "bottom" inputs: "dense" mlp { widths: [8] activate_last: true } }
  nodes { name: "fields" inputs: ["bottom", "uiv"] concat {} }
  nodes { name: "dots" inputs: "fields" dot_interaction { self_terms: true } }
  nodes { name: "fm" inputs: "uiv" fm {} }
  nodes { name: "u" embeddings { features: "user" } }
  nodes { name: "i" embeddings { features: "item" } }
  nodes { name: "gmf" inputs: ["u", "i"] product {} }
  nodes { name: "ui" inputs: ["u", "i"] dot {} }
  nodes { name: "deep" inputs: ["cross", "v1", "dots", "gmf"] concat {} }
  nodes { name: "tower" inputs: "deep" mlp { widths: [16, 1] } }
  nodes { name: "linear" inputs: "deep" mlp { widths: [4, 1] activation: ACTIVATION_NONE } }
  nodes { name: "click_logit" inputs: ["tower", "fm", "ui"] sum {} }
  nodes { name: "rating" inputs: "linear" head { label: "rating" loss_weight: 0.5 } }
  nodes { name: "click" inputs: "click_logit" head { label: "click" } }
} }"""

SCHEMA_JOB = """
name: "schema_regression"
model { kind: MODEL_DCN top_mlp: [16, 8] cross_layers: 1 }
tables { name: "user" dim: 8 }
tables { name: "item" dim: 8 }
tables { name: "genres" dim: 4 pooling: POOLING_MEAN }
dense_optimizer { kind: OPTIMIZER_ADAM learning_rate: 0.001 }
sparse_optimizer { kind: OPTIMIZER_ADAGRAD learning_rate: 0.05 }
data { format: DATA_FORMAT_CSV paths: "%s" schema_file: "%s" eval_fraction: 0.1 }
scheduling { policy: POLICY_HERALD cache_fraction: 0.2 }
global_batch_size: 256
iterations: 12
seed: 11
num_workers: 2
"""


def rmse(labels, predictions):
    return float(np.sqrt(np.mean((labels.astype(np.float64) - predictions) ** 2)))


def predict(model, p):
    dense = torch.from_numpy(p.dense)
    keys = [torch.from_numpy(k) for k, _, _ in p.bags]
    offsets = [torch.from_numpy(o) for _, o, _ in p.bags]
    weights = [None if w is None else torch.from_numpy(w) for _, _, w in p.bags]
    with torch.no_grad():
        return model(dense, keys, offsets, weights).numpy()


@unittest.skipIf(torch is None, WHY if torch is None else "")
class TorchModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cluster.LocalCluster()
        cls.work = cls.cluster.dir
        cls.data = cluster.generate_data(cls.work)
        cls.client = herald.Client(cls.cluster.address, token_file=cls.cluster.token_file)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.stop()

    def train_and_score(self, name, spec):
        job = self.client.submit(spec)
        final = self.client.wait(job)
        self.assertEqual(final.state, herald._proto.scheduler_pb2.JOB_SUCCEEDED,
                         self.cluster.logs())
        export = os.path.join(self.work, name)
        self.client.export(job, export)
        predictions = os.path.join(self.work, name + ".tsv")
        out = subprocess.run([cluster.HERALDCTL, "evaluate", "--model", export, "--json",
                              "--predictions", predictions], capture_output=True, text=True,
                             check=True, timeout=300).stdout
        return export, json.loads(out), herald.read_predictions(predictions)

    def check_heads(self, name, spec):
        """A model graph of several heads: each head's predictions and figures."""
        export, evaluated, p = self.train_and_score(name, spec)
        model = herald_torch.load_model(export)
        mine = predict(model, p)
        self.assertEqual(mine.shape, p.predictions.shape)
        np.testing.assert_allclose(mine, p.predictions, rtol=0, atol=1e-5, err_msg=name)
        for h, figures in enumerate(evaluated["labels"]):
            if figures["regression"]:
                self.assertEqual(round(rmse(p.labels[:, h], mine[:, h]), 4),
                                 round(figures["rmse"], 4), figures["label"])
            else:
                self.assertEqual(round(auc(p.labels[:, h], mine[:, h]), 4),
                                 round(figures["auc"], 4), figures["label"])
        saved = os.path.join(self.work, name + ".pt")
        torch.jit.save(torch.jit.script(model), saved)
        np.testing.assert_allclose(predict(torch.jit.load(saved), p), p.predictions, rtol=0,
                                   atol=1e-5, err_msg=name + " (TorchScript)")
        return evaluated

    def check(self, name, spec=None, regression=False):
        if spec is None:
            spec = cluster.generated_spec(self.data, iterations=12, name=name).replace(
                "model { kind: MODEL_WIDE_AND_DEEP top_mlp: [16, 8] }", MODELS[name])
        export, evaluated, p = self.train_and_score(name, spec)
        self.assertGreater(len(p), 500)
        exported = herald.read_export(export)
        untrained = sum(int(np.count_nonzero(~np.isin(keys.view(np.uint64),
                                                      exported.tables[t].keys)))
                        for (keys, _, _), t in zip(p.bags, self.feature_tables(exported.spec)))
        self.assertGreater(untrained, 0, "no held-out id the model never trained")
        model = herald_torch.load_model(export)
        mine = predict(model, p)
        np.testing.assert_allclose(mine, p.predictions, rtol=0, atol=1e-5, err_msg=name)
        if regression:
            self.assertAlmostEqual(rmse(p.labels, p.predictions), evaluated["rmse"], places=5)
            self.assertEqual(round(rmse(p.labels, mine), 4), round(evaluated["rmse"], 4))
        else:
            self.assertAlmostEqual(auc(p.labels, p.predictions), evaluated["auc"], places=6)
            self.assertEqual(round(auc(p.labels, mine), 4), round(evaluated["auc"], 4))
        # TorchScript: saved, loaded and scored without this package.
        saved = os.path.join(self.work, name + ".pt")
        torch.jit.save(torch.jit.script(model), saved)
        loaded = torch.jit.load(saved)
        np.testing.assert_allclose(predict(loaded, p), p.predictions, rtol=0, atol=1e-5,
                                   err_msg=name + " (TorchScript)")

    def test_wide_and_deep(self):
        self.check("wide_and_deep")

    def test_deepfm(self):
        self.check("deepfm")

    def test_dcn(self):
        self.check("dcn")

    def test_ncf(self):
        self.check("ncf")

    def test_dlrm(self):
        self.check("dlrm")

    def test_id_admission_drops_keys_without_rows(self):
        """Tables with id admission: a held-out id without a row is absent
        from its bag (not an initial row), in Herald and in PyTorch."""
        spec = cluster.generated_spec(self.data, iterations=12, name="admission")
        spec = spec.replace(' dim: 4 }', ' dim: 4 admission { min_count: 3 } }')
        self.assertIn("admission", spec)
        self.check("admission", spec=spec)

    def shop_spec(self, name, model=None):
        """A job spec over generated CSV data of SCHEMA (8000 rows), its model
        SCHEMA_JOB's or `model`."""
        schema = os.path.join(self.work, name + ".schema.txt")
        with open(schema, "w") as f:
            f.write(SCHEMA)
        data = os.path.join(self.work, name + ".csv")
        subprocess.run([cluster.HERALDCTL, "gen-data", "--schema", schema, "--rows", "8000",
                        "--cardinality_scale", "0.3", "--out", data], check=True,
                       capture_output=True, timeout=300)
        text = SCHEMA_JOB % (data, schema)
        if model is not None:
            text = text.replace("model { kind: MODEL_DCN top_mlp: [16, 8] cross_layers: 1 }", model)
        spec = os.path.join(self.work, name + ".txt")
        with open(spec, "w") as f:
            f.write(text)
        return spec

    def test_schema_with_weights_shared_table_and_regression_label(self):
        self.check("schema_regression", spec=self.shop_spec("shop"), regression=True)

    def test_graph_of_every_layer_with_two_heads(self):
        evaluated = self.check_heads("graph_two_heads", self.shop_spec("shop2", GRAPH_MODEL))
        self.assertEqual([l["label"] for l in evaluated["labels"]], ["rating", "click"])

    def test_example_train_and_serve(self):
        spec = os.path.join(self.work, "example.txt")
        with open(spec, "w") as f:
            f.write(cluster.generated_spec(self.data, iterations=6, name="example"))
        out = os.path.join(self.work, "example")
        run = subprocess.run(
            ["/usr/bin/python3", cluster.binary("examples/python/train_and_serve.py"),
             "--scheduler", self.cluster.address, "--token-file", self.cluster.token_file,
             "--spec", spec, "--out", out, "--heraldctl", cluster.HERALDCTL],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        gap = float(run.stdout.split("largest difference from Herald's: ")[1].split()[0])
        self.assertLessEqual(gap, 1e-5, run.stdout)
        self.assertTrue(os.path.exists(os.path.join(out, "model.pt")))

    @staticmethod
    def feature_tables(spec):
        """The table of each feature, in the model's feature order."""
        if not spec.data.HasField("schema"):
            return list(range(len(spec.tables)))
        names = [t.name for t in spec.tables]
        return [names.index(c.table or c.name) for c in spec.data.schema.columns
                if c.role == herald._proto.job_pb2.COLUMN_SPARSE]


if __name__ == "__main__":
    unittest.main(verbosity=2)
