"""Preflight check data.holdout through nss_hpc --preflight-only at 2 ranks:
records prepared with a holdout pass it; the holdout file used as data.path,
a holdout that is missing, changed or of other columns, and a holdout row
that the training file also holds are exit 4 on every rank, naming the
file; records without a holdout skip it."""
import hashlib
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, VENV_PYTHON, binary, preflight_checks, remove, scratch, write  # noqa: E402

def table(rows):
    lines = ["city,temp"] + ["c%d,%d" % (r % 40, r % 97) for r in range(rows)]
    return "\n".join(lines) + "\n"


class HoldoutPreflightTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("holdout_preflight")

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def prepare(self, name, *args):
        source = write(os.path.join(self.tmp, name + ".csv"), table(400))
        output = os.path.join(self.tmp, name + ".h5")
        proc = subprocess.run([binary("nss_prepare_data"), "--format", "records", "--input", source, "--output",
                               output] + list(args), capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return output

    def preflight(self, data, name):
        proc, checks = preflight_checks(os.path.join(self.tmp, "run_" + name), data)
        return proc, checks.get("data.holdout")

    def test_a_prepared_holdout_passes(self):
        data = self.prepare("good", "--holdout", "0.1", "--holdout-eval")
        proc, check = self.preflight(data, "good")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(check["status"], "pass", check)
        self.assertIn("40 rows, unchanged", check["message"])

    def test_records_without_a_holdout_skip_the_check(self):
        proc, check = self.preflight(self.prepare("none"), "none")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(check["status"], "skipped", check)

    def test_a_broken_holdout_is_a_data_error(self):
        cases = {
            "as_data": lambda data: data[:-3] + ".holdout.h5",
            "missing": lambda data: os.remove(data[:-3] + ".holdout.csv") or data,
            "changed": lambda data: open(data[:-3] + ".holdout.csv", "a").write("c1,5\n") and data,
        }
        messages = {"as_data": "(split: holdout)", "missing": "cannot be read", "changed": "changed since"}
        for name, spoil in cases.items():
            with self.subTest(case=name):
                data = spoil(self.prepare("bad_" + name, "--holdout", "0.1", "--holdout-eval"))
                proc, check = self.preflight(data, name)
                self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
                self.assertEqual(check["status"], "fail", check)
                self.assertIn(messages[name], check["message"])
                self.assertIn("holdout", proc.stderr)

    def test_a_changed_tokenizer_leaves_the_rows_uncompared(self):
        tokenizer = os.path.join(self.tmp, "tokenizer.json")
        shutil.copyfile(os.path.join(SOURCE, "tests", "fixtures", "families", "llama", "tokenizer.json"), tokenizer)
        data = self.prepare("hf", "--holdout", "0.1", "--tokenizer", tokenizer)
        proc, check = self.preflight(data, "hf")
        self.assertEqual(check["status"], "pass", check)
        with open(tokenizer, "a") as f:
            f.write("\n")  # the same JSON, another file: its ids can no longer be trusted to match
        proc, check = self.preflight(data, "hf_changed")
        self.assertEqual(check["status"], "warn", check)
        self.assertIn("tokenizer_sha256 differs", check["message"])

    def test_a_holdout_row_trained_on_is_a_data_error(self):
        data = self.prepare("leak", "--holdout", "0.1")
        other = self.prepare("leak_other", "--holdout", "0.1", "--holdout-seed", "7")
        # Another split's holdout recorded as this file's (its hash too): some of its rows are trained on here.
        held = data[:-3] + ".holdout.csv"
        shutil.copyfile(other[:-3] + ".holdout.csv", held)
        with open(held, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        patch = "import h5py, sys; f = h5py.File(sys.argv[1], 'a'); f.attrs['holdout_sha256'] = sys.argv[2]; f.close()"
        proc = subprocess.run([VENV_PYTHON, "-c", patch, data, digest], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc, check = self.preflight(data, "leak")
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertIn("has a row that", check["message"])

if __name__ == "__main__":
    unittest.main()
