"""Preflight check data.pii through nss_hpc --preflight-only at 2 ranks: a
records table with personal data prepared without PII handling warns, naming
the columns found in its original CSV, and the run still passes (the data
are the user's to train on); --pii replace passes with the report; --pii
detect warns; a PII-free table passes; an original CSV that is gone skips."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import binary, preflight_checks, remove, scratch, write  # noqa: E402
import pii_people  # noqa: E402


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
        proc, checks = preflight_checks(os.path.join(self.tmp, "run_" + name), data)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        return checks["data.pii"]

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
