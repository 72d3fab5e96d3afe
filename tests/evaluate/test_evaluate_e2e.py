"""nss_evaluate through the real binaries: a records table prepared with a
holdout, a tiny model fine-tuned on it, synthetic records sampled, and
nss_evaluate --step finding the training rows and the holdout from the step
alone; evaluation.json names every score as NeMo Safe Synthesizer does and
report.html passes the static check (no external reference, the scores of
evaluation.json in the page); on a reference table the quality scores are NeMo
Safe Synthesizer's own; bad input is exit 2 or 4 naming the file, line and
column."""
import csv
import io
import json
import os
import random
import shutil
import subprocess
import sys
import unittest

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, binary, mpirun, remove, scratch, write  # noqa: E402

CONFIG = os.path.join(SOURCE, "configs", "run.yaml")
CHECKER = os.path.join(SOURCE, "scripts", "check_report_html.py")
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "evaluation")
SUMMARY = ["synthetic_data_quality_score", "column_correlation_stability_score", "deep_structure_stability_score",
           "column_distribution_stability_score", "text_semantic_similarity_score",
           "text_structure_similarity_score", "data_privacy_score", "membership_inference_protection_score",
           "attribute_inference_protection_score"]


def table(rows, seed):
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["city", "temp", "rain"])
    for _ in range(rows):
        writer.writerow([rng.choice(["Oslo", "Lima", "Pune", "Kyiv"]), rng.randrange(10, 30), rng.choice(["yes", "no"])])
    return out.getvalue()


def evaluate(*args):
    return subprocess.run([binary("nss_evaluate")] + list(args), capture_output=True, text=True, timeout=300)


def sha256_of(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_json(path):
    with open(path) as f:
        return json.load(f)


class EvaluateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("evaluate")
        cls.table = write(os.path.join(cls.tmp, "table.csv"), table(400, 1))
        data = os.path.join(cls.tmp, "records.h5")
        prepared = subprocess.run([binary("nss_prepare_data"), "--format", "records", "--input", cls.table,
                                   "--output", data, "--prompt-template", "Row of {columns}:\n", "--holdout", "0.1"],
                                  capture_output=True, text=True)
        assert prepared.returncode == 0, prepared.stderr
        run = os.path.join(cls.tmp, "run")
        sets = ["run.output_dir=" + run, "data.path=" + data, "eval.interval_steps=0", "data.seq_len=64",
                "training.max_steps=200", "training.warmup_steps=10", "training.lr=3e-3",
                "checkpoint.interval_steps=0", "preflight.enabled=false"]
        proc = mpirun(2, [binary("nss_hpc"), CONFIG] + [a for s in sets for a in ("--set", s)], timeout=900)
        assert proc.returncode == 0, proc.stderr
        cls.step = os.path.join(run, "checkpoints", "step_%08d" % 200)
        cls.synthetic_dir = os.path.join(cls.tmp, "synthetic")
        generated = subprocess.run([binary("nss_generate"), "--model", cls.step, "--records", "60", "--output",
                                    cls.synthetic_dir, "--seed", "3", "--max-new-tokens", "48"],
                                   capture_output=True, text=True, timeout=600)
        assert generated.returncode == 0, generated.stderr
        cls.synthetic = os.path.join(cls.synthetic_dir, "synthetic.csv")

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def check_report(self, directory):
        proc = subprocess.run([sys.executable, CHECKER, os.path.join(directory, "report.html")],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        return proc.stdout

    def test_a_step_finds_its_training_rows_and_holdout(self):
        out = self.out("from_step")
        proc = evaluate("--step", self.step, "--synthetic", self.synthetic, "--output", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"^SQS \d+\.\d \([A-Za-z ]+\), DPS (\d+\.\d \([A-Za-z ]+\)|unavailable) in ")
        doc = read_json(os.path.join(out, "evaluation.json"))
        self.assertEqual(list(doc["summary"]), SUMMARY)
        # The rows as trained on: PII handling (on by default) gave the cities surrogates.
        self.assertEqual(doc["inputs"]["training"]["path"], os.path.join(self.tmp, "records.training.csv"))
        self.assertEqual(doc["inputs"]["training"]["rows"], 360)
        replay = doc["pii_replay"]
        self.assertEqual(replay["report"]["path"], os.path.join(self.tmp, "records.pii.json"))
        self.assertEqual(replay["report"]["original_training_rows"], 360)
        self.assertEqual((replay["training_total_records"], replay["synthetic_total_records"]),
                         (360, doc["inputs"]["synthetic"]["rows"]))
        self.assertEqual([(d["column_name"], d["pii_type"], d["total_training_data"], d["unique_training_data"],
                           d["unique_synthetic_data_percentage"]) for d in replay["pii_replay_data"]],
                         [("city", "city", 360, 4, 0.0)])
        self.assertEqual(doc["inputs"]["holdout"]["rows"], 40)
        self.assertTrue(doc["inputs"]["holdout"]["path"].endswith("records.holdout.csv"))
        self.assertIsNone(doc["privacy"])
        for name, component in doc["components"].items():
            self.assertEqual(set(component), {"raw_score", "grade", "score", "notes"}, name)
            if component["score"] is None:
                self.assertEqual(component["grade"], "Unavailable", name)
        self.assertIsNotNone(doc["summary"]["synthetic_data_quality_score"])
        self.assertIsNotNone(doc["summary"]["membership_inference_protection_score"])
        self.assertIsNone(doc["summary"]["text_semantic_similarity_score"])
        found = self.check_report(out)
        self.assertIn("%.1f" % doc["summary"]["synthetic_data_quality_score"], found)
        marked = subprocess.run([sys.executable, CHECKER, os.path.join(out, "report.html"), "--json"],
                                capture_output=True, text=True)
        self.assertEqual(json.loads(marked.stdout)["pii_replay"], [{"column": "city", "value": 0.0}])

    def test_quality_equals_nemo_safe_synthesizers_on_a_reference_table(self):
        fixture = os.path.join(FIXTURES, "wine", "independent")
        out = self.out("wine")
        proc = evaluate("--train", os.path.join(fixture, "train.csv"), "--holdout", os.path.join(fixture, "holdout.csv"),
                        "--synthetic", os.path.join(fixture, "synthetic.csv"), "--output", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ours = read_json(os.path.join(out, "evaluation.json"))
        theirs = read_json(os.path.join(fixture, "scores.json"))
        for key in ("synthetic_data_quality_score", "column_correlation_stability_score",
                    "deep_structure_stability_score", "column_distribution_stability_score"):
            self.assertEqual(ours["summary"][key], theirs["summary"][key], key)
        for key in ("data_privacy_score", "membership_inference_protection_score",
                    "attribute_inference_protection_score"):
            self.assertLessEqual(abs(ours["summary"][key] - theirs["summary"][key]), 0.5, key)
        self.assertEqual(ours["dataset_statistics"]["memorized_lines"],
                         theirs["dataset_statistics"]["memorized_lines"])
        self.check_report(out)

    def test_bad_input_is_a_clear_error(self):
        fixture = os.path.join(FIXTURES, "iris", "independent")
        train = os.path.join(fixture, "train.csv")
        with open(os.path.join(fixture, "synthetic.csv")) as f:
            lines = f.read().splitlines()
        other_columns = write(self.out("other.csv"), "\n".join([lines[0].replace("target", "label")] + lines[1:]) + "\n")
        not_a_number = write(self.out("nan.csv"), "\n".join(lines[:3] + ["abc" + lines[3][lines[3].index(","):]]
                                                            + lines[4:]) + "\n")
        empty = write(self.out("empty.csv"), "")
        header_only = write(self.out("header.csv"), lines[0] + "\n")
        huge = write(self.out("huge.csv"), lines[0] + "\n" + "x" * (2 << 20) + ",1,1,1,1\n")
        blocking_file = write(self.out("a_file"), "")
        cases = [
            ([other_columns], 4, ["other.csv: its columns differ", "missing: target", "not in training: label"]),
            ([not_a_number], 4, ["nan.csv:4: column sepal length (cm) holds 'abc', not a number"]),
            ([empty], 4, ["empty.csv"]),
            ([header_only], 4, ["header.csv has a CSV header but no rows"]),
            ([huge], 4, ["huge.csv:2: column sepal length (cm) holds a cell of 2097152 bytes"]),
            ([self.out("absent.csv")], 4, ["absent.csv"]),
        ]
        for synthetic, code, messages in cases:
            with self.subTest(synthetic=synthetic[0]):
                proc = evaluate("--train", train, "--synthetic", synthetic[0], "--output", self.out("bad"))
                self.assertEqual(proc.returncode, code, proc.stderr)
                for message in messages:
                    self.assertIn(message, proc.stderr)
                self.assertFalse(os.path.exists(self.out("bad")), "a failed run leaves no directory")
        usage = [
            (["--synthetic", train, "--output", self.out("u")], "no training table"),
            (["--train", train, "--output", self.out("u")], "--synthetic is required"),
            (["--train", train, "--synthetic", train, "--output", blocking_file], "a_file"),
        ]
        for args, message in usage:
            with self.subTest(args=args):
                proc = evaluate(*args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(message, proc.stderr)
        # Not a committed step: the checkpoint error every tool that reads a step gives.
        empty_step = self.out("empty/checkpoints/step_00000007")
        os.makedirs(empty_step, exist_ok=True)
        not_steps = [(self.tmp, "is not a committed step"), (empty_step, "has no metadata.json")]
        for step, message in not_steps:
            with self.subTest(step=step):
                proc = evaluate("--step", step, "--synthetic", train, "--output", self.out("u"))
                self.assertEqual(proc.returncode, 5, proc.stderr)
                self.assertIn(message, proc.stderr)
                self.assertFalse(os.path.exists(self.out("u")))

    def test_a_changed_table_is_refused(self):
        copy = write(self.out("copy_table.csv"), table(400, 1))
        data = self.out("copy.h5")
        prepared = subprocess.run([binary("nss_prepare_data"), "--format", "records", "--input", copy,
                                   "--output", data, "--holdout", "50"], capture_output=True, text=True)
        self.assertEqual(prepared.returncode, 0, prepared.stderr)
        # The trained step, its dataset record pointed at the copy.
        step = self.out("copy_run/checkpoints/step_%08d" % 200)
        shutil.copytree(self.step, step)
        held = self.out("copy.holdout.csv")
        metadata = read_json(os.path.join(step, "metadata.json"))
        with h5py.File(data, "r") as f:
            recorded = {k: f.attrs[k] for k in ("source_table", "source_sha256", "holdout_table", "holdout_sha256",
                                                "training_table", "training_sha256", "pii_report",
                                                "pii_report_sha256")}
        metadata["state"]["dataset"].update({k: v.decode() if isinstance(v, bytes) else str(v)
                                             for k, v in recorded.items()})
        write(os.path.join(step, "metadata.json"), json.dumps(metadata))
        proc = evaluate("--step", step, "--synthetic", self.synthetic, "--output", self.out("changed_ok"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # Each file the step names, changed: the original table (PII replay reads it), the
        # training rows as trained on, the holdout, the PII report.
        for name, what in (("copy_table.csv", "copy_table.csv changed since the PII report"),
                           ("copy.training.csv", "copy.training.csv changed since the data was prepared"),
                           ("copy.holdout.csv", "copy.holdout.csv changed since the data was prepared"),
                           ("copy.pii.json", "the PII report %s changed" % self.out("copy.pii.json"))):
            with self.subTest(changed=name):
                path = self.out(name)
                with open(path) as f:
                    before = f.read()
                with open(path, "a") as f:
                    f.write("\n" if name.endswith(".json") else "Oslo,99,yes\n")
                proc = evaluate("--step", step, "--synthetic", self.synthetic, "--output", self.out("changed"))
                self.assertEqual(proc.returncode, 4, proc.stderr)
                self.assertIn(what, proc.stderr)
                self.assertFalse(os.path.exists(self.out("changed")))
                write(path, before)


if __name__ == "__main__":
    unittest.main()
