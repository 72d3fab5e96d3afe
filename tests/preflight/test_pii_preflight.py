"""Preflight check data.pii through nss_hpc --preflight-only at 2 ranks: a
records table with personal data prepared without PII handling warns, naming
the columns found in its original CSV, and the run still passes (the data
are the user's to train on); --pii replace passes with the report; --pii
detect warns; a PII-free table passes; an original CSV that is gone skips."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, binary, mpirun, remove, scratch, write  # noqa: E402
import pii_people  # noqa: E402

CONFIG = os.path.join(SOURCE, "configs", "run.yaml")


class PiiPreflightTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("pii_preflight")

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def prepare(self, name, *args, people=True):
        source = os.path.join(self.tmp, name + ".csv")
        if people:
            pii_people.write_people(source, 40)
        else:
            write(source, "city_code,temp\n" + "".join("c%d,%d\n" % (r % 9, r % 31) for r in range(80)))
        output = os.path.join(self.tmp, name + ".h5")
        proc = subprocess.run([binary("nss_prepare_data"), "--format", "records", "--input", source, "--output",
                               output] + list(args), capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return output

    def preflight(self, data, name):
        run = os.path.join(self.tmp, "run_" + name)
        sets = ["run.output_dir=" + run, "data.path=" + data, "eval.interval_steps=0", "data.seq_len=64",
                "training.global_batch_size=4", "training.micro_batch_size=2"]
        proc = mpirun(2, [binary("nss_hpc"), CONFIG, "--preflight-only"] + [a for s in sets for a in ("--set", s)],
                      timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        with open(os.path.join(run, "preflight.json")) as f:
            return {c["id"]: c for c in json.load(f)["checks"]}["data.pii"]

    def test_each_way_a_table_was_prepared(self):
        check = self.preflight(self.prepare("off", "--pii", "off"), "off")
        self.assertEqual(check["status"], "warn", check)
        self.assertIn("prepared without PII handling and the first 80 rows of", check["message"])
        self.assertIn("columns customer (name), street (street_address), email (email), phone (phone_number), "
                      "ssn (ssn), card (credit_debit_card); 160 values inside free text", check["message"])
        self.assertIn("--pii replace", check["remediation"])

        check = self.preflight(self.prepare("replaced"), "replaced")
        self.assertEqual(check["status"], "pass", check)
        self.assertIn("prepared with --pii replace (columns customer (name), street (street_address), email (email)", check["message"])

        check = self.preflight(self.prepare("detected", "--pii", "detect"), "detected")
        self.assertEqual(check["status"], "warn", check)
        self.assertIn("personal data found and left in the training rows", check["message"])

        check = self.preflight(self.prepare("clean", "--pii", "off", people=False), "clean")
        self.assertEqual(check["status"], "pass", check)
        self.assertIn("no personal data in the first 80 rows", check["message"])

        data = self.prepare("gone", "--pii", "off")
        os.remove(os.path.join(self.tmp, "gone.csv"))
        check = self.preflight(data, "gone")
        self.assertEqual(check["status"], "skipped", check)
        self.assertIn("gone.csv was not scanned", check["message"])


if __name__ == "__main__":
    unittest.main()
