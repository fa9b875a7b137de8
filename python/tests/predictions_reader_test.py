"""herald.read_predictions on files written the way `heraldctl evaluate
--predictions` writes them (cli/predictions_file.h), and its refusals:
a missing file, a file that is not one, a line with the wrong field
count or a bad number, each named."""

import os
import tempfile
import unittest

import numpy as np

import herald

GOOD = ("label\tprediction\tdense\titem\tviewed\tgenres\n"
        "1\t0.75\t0.5,-2\t7\t8 9\t18446744073709551615:0.5 3:1\n"
        "0\t0.125\t3,0.25\t10\t\t\n")


class PredictionsReaderTest(unittest.TestCase):
    def write(self, text):
        fd, path = tempfile.mkstemp(suffix=".tsv")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.remove, path)
        return path

    def test_reads_labels_predictions_dense_and_each_features_bags(self):
        p = herald.read_predictions(self.write(GOOD))
        self.assertEqual(p.features, ["item", "viewed", "genres"])
        self.assertEqual(len(p), 2)
        np.testing.assert_array_equal(p.labels, [1, 0])
        np.testing.assert_array_equal(p.predictions, np.float32([0.75, 0.125]))
        np.testing.assert_array_equal(p.dense, np.float32([[0.5, -2], [3, 0.25]]))
        keys, offsets, weights = p.bags[0]
        np.testing.assert_array_equal(keys, [7, 10])
        np.testing.assert_array_equal(offsets, [0, 1, 2])
        self.assertIsNone(weights)
        keys, offsets, weights = p.bags[1]
        np.testing.assert_array_equal(keys, [8, 9])
        np.testing.assert_array_equal(offsets, [0, 2, 2])
        keys, offsets, weights = p.bags[2]
        self.assertEqual(keys.dtype, np.int64)  # uint64 keys viewed as int64
        np.testing.assert_array_equal(keys.view(np.uint64), np.uint64([2**64 - 1, 3]))
        np.testing.assert_array_equal(offsets, [0, 2, 2])
        np.testing.assert_array_equal(weights, np.float32([0.5, 1]))

    def test_bad_files_are_refused_naming_file_and_line(self):
        with self.assertRaises(herald.HeraldError) as e:
            herald.read_predictions("/nonexistent/p.tsv")
        self.assertEqual(e.exception.code, "NOT_FOUND")
        path = self.write("a\tb\tc\n")
        with self.assertRaises(herald.HeraldError) as e:
            herald.read_predictions(path)
        self.assertIn("%s line 1" % path, str(e.exception))
        path = self.write(GOOD + "1\t0.5\t1,2\t7\n")
        with self.assertRaises(herald.HeraldError) as e:
            herald.read_predictions(path)
        self.assertIn("%s line 4: 4 fields, the header names 6" % path, str(e.exception))
        path = self.write(GOOD.replace("0.75", "x"))
        with self.assertRaises(herald.HeraldError) as e:
            herald.read_predictions(path)
        self.assertEqual(e.exception.code, "DATA_LOSS")
        self.assertIn("line 2", str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
