#!/usr/bin/env python3
"""Self-test of tests/cluster/compare_outputs.py (ctest: cluster_compare_outputs): two
temporary output folders, equal and then changed one way at a time, through the command
line. Exit 77 (a skip) when this interpreter has no numpy."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
except ImportError:
    print(f"SKIP: numpy is not installed for {sys.executable}")
    sys.exit(77)

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare_outputs.py")

CSV = ("image,layer,score,label\n"
       "a.png,0,0.123456789012345678,cat\n"
       "a.png,1,-2.5e-07,cat\n"
       "b.png,0,nan,dog\n")


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


def make_outputs(root):
    os.makedirs(os.path.join(root, "sub"))
    np.save(os.path.join(root, "maps.npy"), np.linspace(0.0, 1.0, 12).reshape(3, 4))
    np.save(os.path.join(root, "sub", "tokens.npy"), np.arange(6, dtype=np.int32))
    write(os.path.join(root, "sub", "scores.csv"), CSV)
    write(os.path.join(root, "summary.csv"), CSV)
    write(os.path.join(root, "figure.png"), b"\x89PNG\r\n\x1a\n" + bytes(range(64)))
    write(os.path.join(root, "run_sidecar.json"), '{"shard": null}\n')
    write(os.path.join(root, "analyze.log"), "single run\n")


class CompareOutputsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="compare_outputs_test.")
        self.single = os.path.join(self.tmp, "single")
        self.merged = os.path.join(self.tmp, "merged")
        make_outputs(self.single)
        make_outputs(self.merged)
        # The run's own records differ between a single and a merged run: ignored.
        write(os.path.join(self.merged, "run_sidecar.json"), '{"shard": "merged"}\n')
        write(os.path.join(self.merged, "shard_0_of_2.json"), "{}\n")
        write(os.path.join(self.merged, "merge_report.json"), "{}\n")
        write(os.path.join(self.merged, "analyze.log"), "merged run\n")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def compare(self, *extra):
        result = subprocess.run([sys.executable, SCRIPT, self.single, self.merged, *extra],
                                capture_output=True, text=True)
        return result.returncode, result.stdout + result.stderr

    def change_csv(self, rel, old, new):
        path = os.path.join(self.merged, rel)
        with open(path) as f:
            text = f.read()
        self.assertIn(old, text)
        write(path, text.replace(old, new))

    def test_equal_folders_pass(self):
        rc, out = self.compare()
        self.assertEqual(rc, 0, out)
        self.assertIn("5 files compared", out)
        rc, out = self.compare("--relative", "*.csv")
        self.assertEqual(rc, 0, out)

    def test_one_ulp_in_npy_fails(self):
        path = os.path.join(self.merged, "maps.npy")
        a = np.load(path)
        a[1, 2] = np.nextafter(a[1, 2], 2.0)
        np.save(path, a)
        rc, out = self.compare("--relative", "*.csv")
        self.assertEqual(rc, 1, out)
        self.assertIn("maps.npy: 1 of 12 elements differ; first at (1, 2)", out)

    def test_npy_dtype_and_shape_must_match(self):
        path = os.path.join(self.merged, "sub", "tokens.npy")
        np.save(path, np.arange(6, dtype=np.int64))
        rc, out = self.compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("sub/tokens.npy: dtype <i4 vs <i8", out)
        np.save(path, np.arange(6, dtype=np.int32).reshape(2, 3))
        rc, out = self.compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("shape (6,) vs (2, 3)", out)

    def test_one_ulp_in_a_byte_compared_csv_fails(self):
        # 0.123456789012345678 and the next double up, as text: 1 ulp, not within 0 bytes.
        self.change_csv("summary.csv", "0.123456789012345678", repr(float(np.nextafter(0.12345678901234568, 1.0))))
        rc, out = self.compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("summary.csv: bytes differ", out)
        rc, out = self.compare("--relative", "sub/*.csv")
        self.assertEqual(rc, 1, out)
        rc, out = self.compare("--relative", "*.csv")
        self.assertEqual(rc, 0, out)

    def test_relative_csv_tolerance(self):
        value = -2.5e-07
        self.change_csv("sub/scores.csv", "-2.5e-07", repr(value * (1 + 1e-14)))
        rc, out = self.compare("--relative", "*.csv")
        self.assertEqual(rc, 0, out)
        rc, out = self.compare()  # not --relative: byte-compared
        self.assertEqual(rc, 1, out)
        self.change_csv("sub/scores.csv", repr(value * (1 + 1e-14)), repr(value * (1 + 1e-10)))
        rc, out = self.compare("--relative", "*.csv")
        self.assertEqual(rc, 1, out)
        self.assertIn("sub/scores.csv: 1 cells differ beyond rtol 1e-12; worst row 2 column 'score'", out)
        rc, out = self.compare("--relative", "*.csv", "--rtol", "1e-9")
        self.assertEqual(rc, 0, out)
        self.change_csv("sub/scores.csv", "nan,dog", "NaN,dog")  # NaN equals NaN
        rc, out = self.compare("--relative", "*.csv", "--rtol", "1e-9")
        self.assertEqual(rc, 0, out)
        self.change_csv("sub/scores.csv", "NaN,dog", "0.5,dog")
        rc, out = self.compare("--relative", "*.csv", "--rtol", "1e-9")
        self.assertEqual(rc, 1, out)

    def test_relative_json_and_std_scale(self):
        table = ('{"name": "t", "columns": ["layer", "x_mean", "x_std", "images"], '
                 '"key_columns": 1, "rows": [[0, %r, %r, 30], [1, null, null, 30]]}')
        write(os.path.join(self.single, "t.json"), table % (3.34636422e-06, 4.6e-22))
        write(os.path.join(self.merged, "t.json"), table % (3.34636422e-06 * (1 + 1e-14), 5.4e-22))
        rc, out = self.compare()
        self.assertEqual(rc, 1, out)  # byte-compared without --relative
        # The std of a constant is rounding noise on its mean's scale: it passes.
        rc, out = self.compare("--relative", "*.json")
        self.assertEqual(rc, 0, out)
        write(os.path.join(self.merged, "t.json"), table % (3.34636422e-06, 3e-17))
        rc, out = self.compare("--relative", "*.json")
        self.assertEqual(rc, 1, out)
        self.assertIn("t.json: /rows[0][x_std]", out)
        write(os.path.join(self.merged, "t.json"), table % (3.34636422e-06 * (1 + 1e-10), 4.6e-22))
        rc, out = self.compare("--relative", "*.json")
        self.assertEqual(rc, 1, out)
        self.assertIn("rows[0][x_mean]", out)
        write(os.path.join(self.merged, "t.json"), '{"other": 1}')
        rc, out = self.compare("--relative", "*.json")
        self.assertEqual(rc, 1, out)
        self.assertIn("keys", out)

    def test_csv_digits(self):
        # 9 printed digits: values within 1e-12 may print one unit apart in the last digit.
        self.change_csv("summary.csv", "-2.5e-07", "-2.50000001e-07")
        rc, out = self.compare("--relative", "*.csv")
        self.assertEqual(rc, 1, out)
        rc, out = self.compare("--relative", "*.csv", "--csv-digits", "9")
        self.assertEqual(rc, 0, out)
        self.change_csv("summary.csv", "-2.50000001e-07", "-2.50000011e-07")
        rc, out = self.compare("--relative", "*.csv", "--csv-digits", "9")
        self.assertEqual(rc, 1, out)

    def test_pdfs_differ_only_in_their_creation_date(self):
        def pdf(date, body):
            return (b"%PDF-1.5\n1 0 obj << /Producer (cairo) /CreationDate (D:" + date +
                    b"Z) >> endobj\n" + body)
        write(os.path.join(self.single, "figure.pdf"), pdf(b"20261127231822", b"page"))
        write(os.path.join(self.merged, "figure.pdf"), pdf(b"20261128010203", b"page"))
        rc, out = self.compare()
        self.assertEqual(rc, 0, out)
        write(os.path.join(self.merged, "figure.pdf"), pdf(b"20261128010203", b"pagf"))
        rc, out = self.compare()
        self.assertEqual(rc, 1, out)
        self.assertIn("figure.pdf: differ beyond the creation date", out)

    def test_relative_csv_text_rows_and_header(self):
        self.change_csv("sub/scores.csv", "dog", "cat")
        rc, out = self.compare("--relative", "*.csv")
        self.assertEqual(rc, 1, out)
        self.assertIn("text differs", out)
        self.change_csv("sub/scores.csv", "b.png,0,nan,cat\n", "")
        rc, out = self.compare("--relative", "*.csv")
        self.assertIn("sub/scores.csv: 3 vs 2 rows", out)
        self.change_csv("sub/scores.csv", "score", "Score")
        rc, out = self.compare("--relative", "*.csv")
        self.assertEqual(rc, 1, out)
        self.assertIn("header", out)

    def test_missing_extra_and_ignored_files(self):
        os.remove(os.path.join(self.merged, "figure.png"))
        write(os.path.join(self.merged, "sub", "extra.txt"), "x")
        rc, out = self.compare()
        self.assertEqual(rc, 1, out)
        self.assertIn(f"missing in {self.merged}: figure.png", out)
        self.assertIn(f"extra in {self.merged}: sub/extra.txt", out)
        rc, out = self.compare("--ignore", "figure.png", "--ignore", "extra.txt")
        self.assertEqual(rc, 0, out)
        self.assertIn("4 files compared", out)
        rc, out = self.compare("--no-default-ignores", "--ignore", "figure.png", "--ignore", "extra.txt")
        self.assertEqual(rc, 1, out)
        self.assertIn("run_sidecar.json: bytes differ", out)
        self.assertIn(f"extra in {self.merged}: shard_0_of_2.json", out)


if __name__ == "__main__":
    unittest.main()
