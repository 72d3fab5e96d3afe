"""nss_synthesize end to end (docs/pipeline.md). On the shipped real model
(SmolLM2-135M-Instruct, scripts/setup.sh converts it) and the README's
products table, configs/synthesize.yaml (5 of its 10 steps) at 2 ranks with differential privacy
on: the run directory holds the prepared data, the checkpoint, the records,
evaluation.json, report.html and privacy.json, which agree on epsilon; a
second start does nothing. A QLoRA fine-tune samples from its NF4 base. Then
bad inputs on a tiny byte-level model: each is refused with its exit code
and a message naming the problem, before the run directory is changed."""
import csv
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from synthesize_support import (SOURCE, STAGES, binary, ledger, read, stages, synthesize,  # noqa: E402
                                synthesize_args, write_inputs, write_products_table)
from nss_e2e import mpirun, remove, scratch, write  # noqa: E402

MODEL = os.environ.get("NSS_REAL_MODEL", os.path.join(SOURCE, "build", "models", "smollm2-135m-instruct"))
SHIPPED_CONFIG = os.path.join(SOURCE, "configs", "synthesize.yaml")
FINAL_LINE = re.compile(r"nss_synthesize: (\d+) valid records in (\S+); SQS ([\d.]+) \(([^)]+)\), "
                        r"DPS ([\d.]+) \(([^)]+)\); report (\S+)")


class RealModelPipelineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(os.path.join(MODEL, "model.safetensors")):
            raise unittest.SkipTest("no converted model at %s (scripts/setup.sh converts SmolLM2-135M-Instruct "
                                    "into it)" % MODEL)
        cls.tmp = scratch("synthesize")
        cls.table = write_products_table(os.path.join(cls.tmp, "products.csv"))
        cls.run_dir = os.path.join(cls.tmp, "run")
        # Half the shipped steps keep the suite's minutes down; the noise is
        # calibrated to the run's steps, so epsilon still reaches the target.
        cls.sets = ["model.from_pretrained=" + MODEL, "privacy.enabled=true", "data.packing=none",
                    "training.max_steps=5"]
        start = time.time()
        # From the source tree, as the README runs it.
        cls.output = synthesize(2, cls.table, SHIPPED_CONFIG, cls.run_dir, cls.sets, timeout=600)
        cls.seconds = time.time() - start
        print("nss_synthesize on SmolLM2, privacy on, 2 ranks: %.1f s" % cls.seconds)
        for stage in ledger(cls.run_dir)["stages"]:
            print("  %-9s %6.1f s  %s" % (stage["name"], stage["seconds"], json.dumps(stage["facts"])))

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def path(self, *parts):
        return os.path.join(self.run_dir, *parts)

    def test_the_run_directory_holds_every_output(self):
        for name in ("pipeline.json", "training.yaml", "privacy.json", "data/records.h5", "data/records.holdout.csv",
                     "data/records.holdout.h5", "data/records.pii.json", "train/preflight.json",
                     "train/checkpoints/step_00000005/metadata.json", "synthetic/synthetic.csv",
                     "synthetic/generation.json", "evaluation/evaluation.json", "evaluation/report.html"):
            self.assertTrue(os.path.isfile(self.path(name)), name)
        self.assertEqual(os.stat(self.path("data", "records.pii.key")).st_mode & 0o777, 0o600)
        # A sampled value may hold a line break (quoted): count records, not lines.
        with open(self.path("synthetic", "synthetic.csv"), newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], ["product", "category", "price"])
        self.assertEqual(len(rows), 61)  # the shipped configuration asks for 60
        recorded = stages(self.run_dir)
        for name in STAGES:
            self.assertEqual((recorded[name]["status"], recorded[name]["runs"]), ("completed", 1), name)
        self.assertEqual(recorded["prepare"]["facts"]["holdout_rows"], 60)
        self.assertEqual(recorded["generate"]["facts"]["valid_records"], 60)
        # Every recorded output is the file as it is now.
        for stage in ledger(self.run_dir)["stages"]:
            for name, out in stage["outputs"].items():
                with open(out["path"], "rb") as f:
                    self.assertEqual(hashlib.sha256(f.read()).hexdigest(), out["sha256"], name)

    def test_the_final_line_names_the_records_the_scores_and_the_report(self):
        match = FINAL_LINE.search(self.output)
        self.assertIsNotNone(match, self.output[-3000:])
        self.assertEqual(int(match.group(1)), 60)
        self.assertEqual(match.group(2), self.path("synthetic", "synthetic.csv"))
        self.assertEqual(match.group(7), self.path("evaluation", "report.html"))
        evaluation = json.loads(read(self.path("evaluation", "evaluation.json")))["summary"]
        self.assertEqual(float(match.group(3)), evaluation["synthetic_data_quality_score"])
        self.assertEqual(float(match.group(5)), evaluation["data_privacy_score"])
        summary = ledger(self.run_dir)["summary"]
        self.assertEqual(summary["quality"]["score"], evaluation["synthetic_data_quality_score"])
        self.assertEqual(summary["report"], self.path("evaluation", "report.html"))

    def test_privacy_json_and_the_report_agree_on_epsilon(self):
        guarantee = json.loads(read(self.path("privacy.json")))
        self.assertGreater(guarantee["epsilon"], 0)
        self.assertLess(guarantee["epsilon"], 8.01)  # privacy.target_epsilon's default
        evaluation = json.loads(read(self.path("evaluation", "evaluation.json")))
        self.assertEqual(evaluation["privacy"]["epsilon"], guarantee["epsilon"])
        self.assertEqual(evaluation["privacy"]["delta"], guarantee["delta"])
        self.assertIn("\u03b5 = %.4g" % guarantee["epsilon"], read(self.path("evaluation", "report.html")))
        self.assertEqual(stages(self.run_dir)["train"]["facts"]["epsilon"], guarantee["epsilon"])

    def test_a_second_start_does_nothing(self):
        before = read(self.path("pipeline.json"))
        start = time.time()
        output = synthesize(2, self.table, SHIPPED_CONFIG, self.run_dir, self.sets)
        for name in STAGES:
            self.assertIn("[pipeline] %s: completed" % name, output)
        self.assertLess(time.time() - start, 60)
        after = json.loads(read(self.path("pipeline.json")))
        self.assertEqual([s["runs"] for s in after["stages"]], [s["runs"] for s in json.loads(before)["stages"]])
        self.assertIsNotNone(FINAL_LINE.search(output))


class QloraPipelineTest(unittest.TestCase):
    def test_a_qlora_fine_tune_samples_from_its_nf4_base(self):
        tmp = scratch("synthesize_qlora")
        self.addCleanup(remove, tmp)
        table, config = write_inputs(tmp, steps=20)
        run_dir = os.path.join(tmp, "run")
        output = synthesize(2, table, config, run_dir, ["training.lora.enabled=true",
                                                        "training.lora.quantize_base=nf4",
                                                        "training.lora.double_quant=true"])
        self.assertIn("the base's projections round-tripped through NF4 with double quantisation", output)
        self.assertIsNotNone(FINAL_LINE.search(output), output[-3000:])
        self.assertEqual({s["status"] for s in stages(run_dir).values()}, {"completed"})


class BadInputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("synthesize_inputs")
        cls.table, cls.config = write_inputs(cls.tmp, steps=20, records=8)

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def refused(self, code, table, run_dir, sets=(), config=None):
        output = synthesize(2, table, config or self.config, run_dir, sets, expect=code)
        self.assertIn("nss_synthesize: error:", output)
        return output

    def test_a_table_that_is_not_a_file(self):
        fifo = os.path.join(self.tmp, "fifo.csv")
        os.mkfifo(fifo)
        for table, why in ((os.path.join(self.tmp, "missing.csv"), "No such file"), (self.tmp, "is a directory"),
                           (fifo, "is a FIFO")):
            with self.subTest(table=table):
                run_dir = os.path.join(self.tmp, "no_table")
                output = self.refused(4, table, run_dir)
                self.assertIn("the table " + table, output)
                self.assertIn(why, output)
                self.assertFalse(os.path.exists(run_dir))

    def test_a_bad_configuration(self):
        run_dir = os.path.join(self.tmp, "bad_config")
        output = self.refused(2, self.table, run_dir, ["pipeline.holdout=1.5", "pipeline.records=-1",
                                                         "pipeline.pii=maybe", "pipeline.order_by=price"])
        for problem in ("pipeline.holdout: must be a fraction below 1 or a whole count",
                        "pipeline.records: must be in [1,", "pipeline.pii: must be one of off, detect, replace",
                        "pipeline.order_by: orders the rows inside a group"):
            self.assertIn(problem, output)
        output = self.refused(2, self.table, run_dir, config=os.path.join(self.tmp, "missing.yaml"))
        self.assertIn("missing.yaml", output)
        self.assertFalse(os.path.exists(run_dir))

    def test_a_run_directory_that_is_a_file(self):
        taken = write(os.path.join(self.tmp, "taken"), "x")
        output = self.refused(2, self.table, taken)
        self.assertIn(taken, output)
        self.assertEqual(read(taken), "x")

    def test_a_run_directory_without_room(self):
        # A file-size limit stands in for a full disk: the first file the job
        # writes fails with the place named, exit 2 on every rank, no abort.
        run_dir = os.path.join(self.tmp, "no_room")
        proc = mpirun(2, ["sh", "-c", 'ulimit -f 16 && trap "" XFSZ && exec "$0" "$@"', binary("nss_synthesize")]
                      + synthesize_args(self.table, self.config, run_dir))
        output = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 2, output[-3000:])
        # The ledger is small enough; the prepared data is the first file over the limit.
        self.assertRegex(output, r"nss_synthesize: error: \[data\] cannot reserve [^\n]* for "
                         + re.escape(os.path.join(run_dir, "data", "records.")))
        self.assertNotIn("MPI_ABORT", output)

    def test_a_damaged_ledger(self):
        run_dir = os.path.join(self.tmp, "damaged")
        os.makedirs(run_dir)
        write(os.path.join(run_dir, "pipeline.json"), '{"version": 1, "stages": [')
        output = self.refused(4, self.table, run_dir)
        self.assertIn("pipeline.json is not a pipeline ledger", output)
        self.assertIn("move it away", output)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "data")))

    def test_a_changed_table_after_the_fine_tune_is_refused_and_changes_nothing(self):
        run_dir = os.path.join(self.tmp, "changed")
        synthesize(2, self.table, self.config, run_dir)
        before = {name: read(os.path.join(run_dir, name), "rb")
                  for name in ("pipeline.json", "data/records.h5", "synthetic/synthetic.csv")}
        smaller = write(os.path.join(self.tmp, "smaller.csv"), "\n".join(read(self.table).splitlines()[:200]) + "\n")
        output = self.refused(2, smaller, run_dir)
        self.assertIn("holds steps fine-tuned on the data prepared before", output)
        self.assertIn("--set run.output_dir=PATH", output)
        for name, content in before.items():
            self.assertEqual(read(os.path.join(run_dir, name), "rb"), content, name)
        output = synthesize(2, self.table, self.config, run_dir)  # the table put back: nothing to do
        self.assertIn("[pipeline] prepare: completed", output)

    def test_a_table_too_small_for_a_holdout_is_fine_tuned_without_validation(self):
        # pipeline.holdout 0.2 of 100 rows: no holdout (fewer than 200 rows),
        # so the fine-tune's configuration turns validation off.
        run_dir = os.path.join(self.tmp, "small")
        small = write(os.path.join(self.tmp, "small.csv"), "\n".join(read(self.table).splitlines()[:101]) + "\n")
        output = synthesize(2, small, self.config, run_dir)
        self.assertIn("no holdout, the table has fewer than 200 rows", output)
        prepared = stages(run_dir)["prepare"]
        self.assertEqual(prepared["facts"]["holdout_rows"], 0)
        self.assertNotIn("holdout_tokens", prepared["outputs"])
        training = read(os.path.join(run_dir, "training.yaml"))
        self.assertIn('\n  path: ""  # Held-out token dataset', training)
        self.assertIn("\n  interval_steps: 0  # Validate every", training)
        self.assertIn("validation is off", read(os.path.join(run_dir, "train", "preflight.json")))
        output = synthesize(2, small, self.config, run_dir)  # the same configuration: nothing to do
        for name in STAGES:
            self.assertIn("[pipeline] %s: completed" % name, output)
        # A sampling limit too short for the records, after the fine-tune:
        # refused before the sampling, nothing changed.
        before = {name: read(os.path.join(run_dir, name), "rb") for name in ("pipeline.json", "synthetic/synthetic.csv")}
        output = self.refused(2, small, run_dir, ["pipeline.max_new_tokens=16"])
        self.assertIn("pipeline.max_new_tokens 16 cannot hold 100 of the 100 training examples", output)
        for name, content in before.items():
            self.assertEqual(read(os.path.join(run_dir, name), "rb"), content, name)

    def test_a_sampling_limit_too_short_for_the_records_is_refused_before_the_fine_tune(self):
        run_dir = os.path.join(self.tmp, "short_limit")
        output = self.refused(2, self.table, run_dir, ["pipeline.max_new_tokens=16"])
        found = re.search(r"pipeline.max_new_tokens 16 cannot hold (\d+) of the 240 training examples of \S+ "
                          r"\(the longest takes (\d+) tokens with its end token\)", output)
        self.assertTrue(found, output[-3000:])
        longest = int(found.group(2))
        self.assertIn("hint: set pipeline.max_new_tokens=%d or more" % longest, output)
        recorded = stages(run_dir)
        self.assertEqual([recorded[name]["status"] for name in STAGES],
                         ["completed", "pending", "pending", "pending", "pending"])
        # The byte-level records of the table: its longest row, its end token.
        rows = read(self.table).splitlines()[1:]
        self.assertGreater(longest, max(len(row) for row in rows))
        # A limit past the model's positions, and a model whose positions hold no record.
        output = self.refused(2, self.table, run_dir, ["pipeline.max_new_tokens=16777216"])
        found = re.search(r"pipeline.max_new_tokens 16777216 after the (\d+)-token prompt exceeds the model's "
                          r"1024 positions\n  hint: set pipeline.max_new_tokens between %d \(the longest training "
                          r"example's records\) and (\d+)" % longest, output)
        self.assertTrue(found, output[-3000:])
        self.assertEqual(int(found.group(1)) + int(found.group(2)), 1024)
        output = self.refused(2, self.table, os.path.join(self.tmp, "few_positions"),
                              ["model.max_position_embeddings=128"])
        self.assertIn("more than the model's 128 positions: its records cannot be sampled", output)
        synthesize(2, self.table, self.config, run_dir, ["pipeline.max_new_tokens=%d" % longest])

    def test_a_column_of_digit_strings_is_sampled_as_digits_and_evaluated(self):
        # Codes with leading zeros, and "NA" for some, are text in the records
        # schema but numbers and missing values to the evaluation, as to
        # pandas: the sampled codes stay digits or "NA".
        rows = read(self.table).splitlines()
        coded = [rows[0] + ",code"] + ["%s,%s" % (row, "NA" if i % 10 == 3 else "%05d" % ((i * 7919) % 20000))
                                       for i, row in enumerate(rows[1:])]
        table = write(os.path.join(self.tmp, "coded.csv"), "\n".join(coded) + "\n")
        run_dir = os.path.join(self.tmp, "coded")
        output = synthesize(2, table, self.config, run_dir, ["pipeline.pii=off"])
        self.assertIn("SQS", output)
        with open(os.path.join(run_dir, "synthetic", "synthetic.csv")) as f:
            codes = [row[-1] for row in csv.reader(f)][1:]
        self.assertEqual(len(codes), 8)
        self.assertTrue(all(code.isdigit() or code == "NA" for code in codes), codes)
        limits = json.loads(read(os.path.join(run_dir, "synthetic", "generation.json")))["value_limits"]
        self.assertEqual((limits["code"]["digit_strings"], limits["code"]["missing_values"], limits["code"]["max_chars"]),
                         (True, ["NA"], 5))
        self.assertFalse(limits["product"]["digit_strings"])

    def test_an_early_stop_names_the_pipeline_keys(self):
        # One step and no constraint: the records are not JSON, the sampling
        # stops early, and its fix names the keys of this file, not nss_generate's options.
        run_dir = os.path.join(self.tmp, "early_stop")
        output = self.refused(4, self.table, run_dir, ["training.max_steps=1", "pipeline.constrain=none"])
        self.assertIn("[generate] stopped early: only ", output)
        self.assertIn("cut off at pipeline.max_new_tokens", output)
        self.assertIn("the invalid fraction stayed above pipeline.invalid_fraction_threshold 0.8 for "
                      "pipeline.patience 1 round(s)", output)
        self.assertIn("train longer (training.max_steps), raise pipeline.max_new_tokens if records are cut off, "
                      "or lower pipeline.temperature", output)
        self.assertNotIn("--max-new-tokens", output.split("[generate] stopped early")[1])

    def test_a_failed_stage_ends_the_job_with_its_code_and_is_run_again(self):
        run_dir = os.path.join(self.tmp, "no_go")
        output = self.refused(3, self.table, run_dir, ["preflight.max_memory_fraction=1e-6"])
        self.assertIn("no-go", output)
        recorded = stages(run_dir)
        self.assertEqual((recorded["preflight"]["status"], recorded["preflight"]["exit_code"]), ("failed", 3))
        self.assertIn("memory", recorded["preflight"]["message"])
        self.assertEqual(recorded["train"]["status"], "pending")
        synthesize(2, self.table, self.config, run_dir)
        recorded = stages(run_dir)
        self.assertEqual([recorded[name]["runs"] for name in STAGES], [1, 2, 1, 1, 1])
        self.assertEqual(recorded["preflight"]["status"], "completed")

    def test_a_second_job_on_the_same_run_directory(self):
        run_dir = os.path.join(self.tmp, "busy")
        first = subprocess.Popen(
            [os.environ.get("NSS_MPIEXEC", "mpiexec"), "-n", "2", "--oversubscribe", binary("nss_synthesize")]
            + synthesize_args(self.table, self.config, run_dir, ["training.max_steps=4000"]),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.time() + 60
            while time.time() < deadline and not os.path.exists(os.path.join(run_dir, "train", "metrics.jsonl")):
                time.sleep(0.05)
            output = self.refused(2, self.table, run_dir)
            self.assertIn("is in use by a live job", output)
        finally:
            first.send_signal(signal.SIGUSR2)
            first.communicate(timeout=120)
        self.assertEqual(first.returncode, 7)
        self.assertEqual(stages(run_dir)["train"]["status"], "interrupted")

    def test_sigterm_to_a_single_process_stops_the_fine_tune(self):
        run_dir = os.path.join(self.tmp, "single")
        proc = subprocess.Popen([binary("nss_synthesize")]
                                + synthesize_args(self.table, self.config, run_dir, ["training.max_steps=4000"]),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and not os.path.exists(os.path.join(run_dir, "train", "metrics.jsonl")):
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 7, output[-3000:])
        recorded = stages(run_dir)["train"]
        self.assertEqual((recorded["status"], recorded["exit_code"]), ("interrupted", 7))
        latest = read(os.path.join(run_dir, "train", "checkpoints", "latest")).strip()
        self.assertTrue(latest.startswith("step_"), latest)


if __name__ == "__main__":
    unittest.main()
