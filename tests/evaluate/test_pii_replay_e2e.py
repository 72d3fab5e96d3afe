"""PII replay end to end, through the real binaries: a small table of people
(names, street addresses, e-mail addresses, phone numbers, SSNs, card
numbers, IBANs) that a
tiny model memorises in 300 steps, prepared twice — with --pii replace and
with --pii detect (the values left in) — fine-tuned, sampled, and evaluated
from the step alone. With replacement no original card number, IBAN, e-mail
address, SSN or phone number comes back (0% replay, and none of them in the
synthetic file), and a name or a street comes back only where a surrogate
drawn from Faker's lists happens to be one; without it the memorised values
replay."""
import csv
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, binary, mpirun, remove, scratch  # noqa: E402
import pii_people  # noqa: E402

CONFIG = os.path.join(SOURCE, "configs", "run.yaml")
COLUMNS = ["customer", "street", "email", "phone", "ssn", "card", "iban", "plan"]
SECRETS = ["email", "phone", "ssn", "card", "iban"]
STEPS = 300


def run(args, timeout=300):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


class PiiReplayTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("pii_replay")
        cls.table = os.path.join(cls.tmp, "people.csv")
        cls.rows = pii_people.write_people(cls.table, 6, seed=3, columns=COLUMNS)
        cls.evaluations = {mode: cls.fine_tune_sample_evaluate(mode) for mode in ("replace", "detect")}

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    @classmethod
    def fine_tune_sample_evaluate(cls, mode):
        data = os.path.join(cls.tmp, mode + ".h5")
        run([binary("nss_prepare_data"), "--format", "records", "--input", cls.table, "--output", data,
             "--pii", mode, "--pii-entities", "all", "--prompt-template", "R:\n"])
        out = os.path.join(cls.tmp, "run_" + mode)
        sets = ["run.output_dir=" + out, "data.path=" + data, "eval.interval_steps=0", "data.seq_len=256",
                "training.max_steps=%d" % STEPS, "training.warmup_steps=10", "training.lr=3e-3",
                "training.global_batch_size=4", "training.micro_batch_size=2", "checkpoint.interval_steps=0",
                "preflight.enabled=false"]
        proc = mpirun(2, [binary("nss_hpc"), CONFIG] + [a for s in sets for a in ("--set", s)], timeout=300)
        assert proc.returncode == 0, proc.stderr
        step = os.path.join(out, "checkpoints", "step_%08d" % STEPS)
        synthetic = os.path.join(cls.tmp, "synthetic_" + mode)
        run([binary("nss_generate"), "--model", step, "--records", "24", "--output", synthetic, "--seed", "3",
             "--max-new-tokens", "256", "--temperature", "0.7"])
        evaluation = os.path.join(cls.tmp, "evaluation_" + mode)
        run([binary("nss_evaluate"), "--step", step, "--synthetic", os.path.join(synthetic, "synthetic.csv"),
             "--output", evaluation])
        with open(os.path.join(evaluation, "evaluation.json")) as f:
            doc = json.load(f)
        with open(os.path.join(synthetic, "synthetic.csv")) as f:
            text = f.read()
        return doc, text

    def replay(self, mode):
        doc, _ = self.evaluations[mode]
        self.assertEqual(doc["pii_replay"]["report"]["mode"], mode)
        self.assertEqual(doc["pii_replay"]["training_total_records"], len(self.rows))
        return {d["column_name"]: d for d in doc["pii_replay"]["pii_replay_data"]}

    def test_replacement_replays_nothing(self):
        replay = self.replay("replace")
        self.assertEqual(sorted(replay), sorted(["customer", "street"] + SECRETS))
        for column in SECRETS:
            self.assertEqual((replay[column]["unique_synthetic_data"],
                              replay[column]["unique_synthetic_data_percentage"]), (0, 0.0), column)
        _, text = self.evaluations["replace"]
        originals = {row[pii_people.HEADER.index(c)] for row in self.rows for c in SECRETS}
        self.assertEqual([v for v in originals if v in text], [], "an original value in synthetic.csv")
        # A name or street comes back only as a surrogate the model learned that is also an original.
        for column in ("customer", "street"):
            c = COLUMNS.index(column)
            with open(os.path.join(self.tmp, "replace.training.csv")) as f:
                learned = {row[c] for row in list(csv.reader(f))[1:]}
            with open(os.path.join(self.tmp, "synthetic_replace", "synthetic.csv")) as f:
                sampled = {row[c] for row in list(csv.reader(f))[1:]}
            originals = {row[pii_people.HEADER.index(column)] for row in self.rows}
            self.assertLessEqual(sampled & originals, learned & originals, column)

    def test_a_bad_report_is_a_data_error_at_once(self):
        step = os.path.join(self.tmp, "run_replace", "checkpoints", "step_%08d" % STEPS)
        synthetic = os.path.join(self.tmp, "synthetic_replace", "synthetic.csv")
        bad = os.path.join(self.tmp, "bad")
        os.makedirs(bad, exist_ok=True)
        os.mkfifo(os.path.join(bad, "fifo.json"))
        with open(os.path.join(bad, "partial.json"), "w") as f:
            f.write('{"format": "nss_pii_report", "version": 1}')
        with open(os.path.join(self.tmp, "replace.pii.json")) as f:
            report = json.load(f)
        report["source_table"] = os.path.join(bad, "fifo.json")  # a FIFO where the table was
        with open(os.path.join(bad, "fifo_source.json"), "w") as f:
            json.dump(report, f)
        cases = {"fifo.json": "is not a regular file", "": "is not a regular file",
                 "partial.json": "is damaged", "missing.json": "No such file",
                 "fifo_source.json": "which cannot be read"}
        for name, words in cases.items():
            with self.subTest(report=name):
                out = os.path.join(self.tmp, "bad_out")
                proc = subprocess.run([binary("nss_evaluate"), "--step", step, "--synthetic", synthetic, "--pii",
                                       os.path.join(bad, name), "--output", out], capture_output=True, text=True,
                                      timeout=30)
                self.assertEqual(proc.returncode, 4, proc.stderr)
                self.assertIn(words, proc.stderr)
                self.assertFalse(os.path.exists(out))

    def test_without_replacement_memorised_values_replay(self):
        replay = self.replay("detect")
        replayed = {c: replay[c]["unique_synthetic_data"] for c in SECRETS}
        self.assertGreater(sum(replayed.values()), 0, replayed)
        _, text = self.evaluations["detect"]
        originals = {row[pii_people.HEADER.index(c)] for row in self.rows for c in SECRETS}
        self.assertTrue(any(v in text for v in originals))


if __name__ == "__main__":
    unittest.main()
