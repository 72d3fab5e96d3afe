"""nss_generate --records through the real binaries: a tiny byte-level model
fine-tuned in the test on a small CSV table (nss_prepare_data --format
records, nss_hpc) writes synthetic records with the table's columns;
synthetic.csv, synthetic.jsonl, invalid.jsonl and generation.json agree with
each other; the records are the same at 1 and 2 ranks and at batch sizes 4
and 8; under --constrain schema (the default) a record is invalid only when
cut off, even from a barely trained model that writes random bytes, which
unconstrained (--constrain none) is stopped early (exit 4) with the records
it wrote; SIGTERM and SIGUSR1 end a run between rounds with
its records written (exit 7 and 75); misuse is exit 2. Gemma 3 (a sliding
window of 16 keys, shorter than one record) and Qwen3 (q/k norms) models
trained the same way write valid records too, the same at 1 and 2 ranks."""
import csv
import io
import json
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, binary, mpirun, remove, scratch  # noqa: E402

CONFIG = os.path.join(SOURCE, "configs", "run.yaml")
COLUMNS = ["city", "temp", "rain"]
CITIES = ["Oslo", "Lima", "Pune", "Kyiv"]


def table(rows, seed):
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for _ in range(rows):
        writer.writerow([rng.choice(CITIES), rng.randrange(10, 30), rng.choice(["yes", "no", ""])])
    return out.getvalue()


def generate(*args, ranks=1):
    command = [binary("nss_generate")] + list(args)
    if ranks == 1:
        return subprocess.run(command, capture_output=True, text=True, timeout=600)
    return mpirun(ranks, command, timeout=600)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class GenerateRecordsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("generate_records")
        source = os.path.join(cls.tmp, "table.csv")
        with open(source, "w") as f:
            f.write(table(400, 1))
        data = os.path.join(cls.tmp, "records.h5")
        # A fixed PII key: the surrogate cities, and so what the model must learn, are the same every run.
        key = os.path.join(cls.tmp, "fixed.pii.key")
        with os.fdopen(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
            f.write("5e" * 32 + "\n")
        prepared = subprocess.run([binary("nss_prepare_data"), "--format", "records", "--input", source,
                                   "--output", data, "--prompt-template", "Row of {columns}:\n", "--pii-key", key],
                                  capture_output=True, text=True)
        assert prepared.returncode == 0, prepared.stderr
        # PII handling (on by default) gave the city column surrogates: the model learns those.
        with open(os.path.join(cls.tmp, "records.training.csv")) as f:
            cls.cities = {row[0] for row in list(csv.reader(f))[1:]}
        assert len(cls.cities) == len(CITIES) and not cls.cities & set(CITIES), cls.cities
        cls.data = data
        cls.trained = cls.train(data, "trained", 300)
        cls.garbage = cls.train(data, "garbage", 1)
        cls.private = cls.train(data, "private", 2, ("privacy.enabled=true", "training.lora.enabled=true",
                                                     "data.packing=none"))

    @classmethod
    def train(cls, data, name, steps, family_sets=()):
        run = os.path.join(cls.tmp, name)
        sets = list(family_sets) + ["run.output_dir=" + run, "data.path=" + data, "eval.interval_steps=0", "data.seq_len=64",
                "training.max_steps=%d" % steps, "training.warmup_steps=10", "training.lr=3e-3",
                "checkpoint.interval_steps=0", "preflight.enabled=false"]
        proc = mpirun(2, [binary("nss_hpc"), CONFIG] + [a for s in sets for a in ("--set", s)], timeout=900)
        assert proc.returncode == 0, proc.stderr
        return os.path.join(run, "checkpoints", "step_%08d" % steps)

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def test_a_fine_tuned_model_writes_records_of_the_tables_columns(self):
        out = self.out("records")
        proc = generate("--model", self.trained, "--records", "24", "--output", out, "--temperature", "0.8",
                        "--seed", "5", "--max-new-tokens", "48")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = list(csv.reader(io.StringIO(read(os.path.join(out, "synthetic.csv")))))
        self.assertEqual(rows[0], COLUMNS)
        self.assertEqual(len(rows), 25)
        for row in rows[1:]:
            self.assertEqual(len(row), 3, row)
            self.assertTrue(row[1].lstrip("-").isdigit(), row)
        records = [json.loads(line) for line in read(os.path.join(out, "synthetic.jsonl")).splitlines()]
        self.assertEqual([[str(r[c]) for c in COLUMNS] for r in records], rows[1:])
        invalid = [json.loads(line) for line in read(os.path.join(out, "invalid.jsonl")).splitlines()]
        summary = json.loads(read(os.path.join(out, "generation.json")))
        self.assertEqual(summary["valid_records"], 24)
        self.assertEqual(summary["invalid_records"], len(invalid))
        self.assertTrue(summary["complete"])
        self.assertGreater(summary["valid_fraction"], 0.5, read(os.path.join(out, "invalid.jsonl")))
        self.assertTrue(all(r["reason"] for r in invalid))
        # --constrain schema (the default): a record is invalid only when cut off.
        self.assertEqual(summary["constrain"], "schema")
        self.assertTrue(all("cut off at --max-new-tokens" in r["reason"] for r in invalid), invalid)
        self.assertEqual(summary["cut_off_records"], len(invalid))
        self.assertIn("%d cut off at --max-new-tokens" % len(invalid), proc.stderr)
        self.assertGreater(summary["mask_seconds"], 0)
        # The bounds come from the training table: the longest city, two-digit temperatures.
        limits = summary["value_limits"]
        self.assertEqual(limits["city"]["max_chars"], max(len(c) for c in self.cities))
        self.assertEqual(limits["temp"]["max_integer_digits"], 2)
        self.assertEqual(limits["temp"]["from"], "training table")
        self.assertIn("valid records/s", proc.stderr)
        self.assertIn("of the %d records judged were valid" % (24 + len(invalid)), proc.stderr)
        self.assertIn("the built-in byte-level tokenizer", proc.stderr)  # the tokenizer the data names

        # With the default --max-new-tokens no record of this table can be
        # cut off (each value is bounded): every record judged is valid.
        whole = self.out("records_default_length")
        proc = generate("--model", self.trained, "--records", "48", "--output", whole, "--temperature", "0.8",
                        "--seed", "6")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        summary = json.loads(read(os.path.join(whole, "generation.json")))
        self.assertEqual((summary["valid_records"], summary["invalid_records"], summary["cut_off_records"]),
                         (48, 0, 0), read(os.path.join(whole, "invalid.jsonl")))

        # The same records at 2 ranks and another batch size: samples are numbered, not scheduled.
        for ranks, batch in ((2, 4), (1, 8)):
            other = self.out("records_%d_%d" % (ranks, batch))
            proc = generate("--model", self.trained, "--records", "24", "--output", other, "--temperature", "0.8",
                            "--seed", "5", "--max-new-tokens", "48", "--batch-size", str(batch), ranks=ranks)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            for name in ("synthetic.csv", "synthetic.jsonl", "invalid.jsonl"):
                self.assertEqual(read(os.path.join(other, name)), read(os.path.join(out, name)), (ranks, batch, name))

    def test_every_family_writes_records(self):
        families = {
            "gemma3": ["model.family=gemma3", "model.sliding_window=16",
                       "model.layer_types=[sliding_attention,full_attention]", "model.rope_theta=1000000",
                       "model.rope_local_theta=10000", "model.query_pre_attn_scalar=16"],
            "qwen3": ["model.family=qwen3"],
        }
        for family, sets in families.items():
            with self.subTest(family=family):
                step = self.train(self.data, family, 300, sets)
                state = json.loads(read(os.path.join(step, "metadata.json")))["state"]
                self.assertEqual(state["model"]["family"], family)
                outs = []
                for ranks in (1, 2):
                    out = self.out("records_%s_%d" % (family, ranks))
                    proc = generate("--model", step, "--records", "12", "--output", out, "--temperature", "0.8",
                                    "--seed", "5", "--max-new-tokens", "48", ranks=ranks)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    outs.append(out)
                rows = list(csv.reader(io.StringIO(read(os.path.join(outs[0], "synthetic.csv")))))
                self.assertEqual(rows[0], COLUMNS)
                self.assertEqual(len(rows), 13)
                for row in rows[1:]:
                    self.assertIn(row[0], self.cities, row)
                    self.assertTrue(row[1].lstrip("-").isdigit(), row)
                summary = json.loads(read(os.path.join(outs[0], "generation.json")))
                self.assertGreater(summary["valid_fraction"], 0.5, read(os.path.join(outs[0], "invalid.jsonl")))
                for name in ("synthetic.csv", "invalid.jsonl"):
                    self.assertEqual(read(os.path.join(outs[1], name)), read(os.path.join(outs[0], name)), name)

    def test_a_model_that_writes_garbage_is_stopped_early(self):
        out = self.out("garbage")
        proc = generate("--model", self.garbage, "--records", "50", "--output", out, "--temperature", "1.0",
                        "--max-new-tokens", "24", "--invalid-fraction-threshold", "0.8", "--patience", "1",
                        "--constrain", "none", ranks=2)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn("stopped early", proc.stderr)
        self.assertIn("invalid.jsonl", proc.stderr)
        self.assertEqual(proc.stderr.count("nss_generate: error"), 1, proc.stderr)
        summary = json.loads(read(os.path.join(out, "generation.json")))
        self.assertFalse(summary["complete"])
        self.assertLess(summary["valid_records"], 50)
        self.assertGreater(len(read(os.path.join(out, "invalid.jsonl")).splitlines()), 0)

    def test_a_constrained_garbage_model_writes_only_valid_records(self):
        # The barely trained model writes random bytes; constrained, every
        # record it finishes before --max-new-tokens is one of the table's
        # (the automaton's strings are bounded, so most do finish).
        for ranks in (1, 2):
            out = self.out("garbage_constrained_%d" % ranks)
            proc = generate("--model", self.garbage, "--records", "8", "--output", out, "--temperature", "1.0",
                            "--max-new-tokens", "400", "--batch-size", "4", "--invalid-fraction-threshold", "1",
                            ranks=ranks)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            summary = json.loads(read(os.path.join(out, "generation.json")))
            self.assertEqual(summary["valid_records"], 8)
            invalid = [json.loads(line) for line in read(os.path.join(out, "invalid.jsonl")).splitlines()]
            self.assertTrue(all("cut off at --max-new-tokens" in r["reason"] for r in invalid), invalid)
            self.assertEqual(summary["cut_off_records"], len(invalid))
            rows = list(csv.reader(io.StringIO(read(os.path.join(out, "synthetic.csv")))))
            self.assertEqual(rows[0], COLUMNS)
            for row in rows[1:]:
                self.assertEqual(len(row), 3, row)
                json.loads(row[1])  # a JSON number: the temp column held only numbers
            if ranks == 2:
                self.assertEqual(read(os.path.join(out, "synthetic.csv")),
                                 read(os.path.join(self.out("garbage_constrained_1"), "synthetic.csv")))

    def test_categories_limit_a_text_column_to_the_tables_values(self):
        out = self.out("categories")
        proc = generate("--model", self.garbage, "--records", "8", "--output", out, "--temperature", "1.0",
                        "--max-new-tokens", "400", "--constrain-categories", "--invalid-fraction-threshold", "1")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = list(csv.reader(io.StringIO(read(os.path.join(out, "synthetic.csv")))))[1:]
        self.assertEqual(len(rows), 8)
        for row in rows:  # even a 1-step model writes only the table's cities and rain values
            self.assertIn(row[0], self.cities, row)
            self.assertIn(row[2], ("yes", "no", ""), row)
        summary = json.loads(read(os.path.join(out, "generation.json")))
        self.assertEqual(summary["categories"], "the training table's")
        # A private step's categories are outside its DP guarantee: refused unless allowed.
        refused = generate("--model", self.private, "--records", "2", "--output", self.out("private_refused"),
                           "--constrain-categories")
        self.assertEqual(refused.returncode, 2, refused.stderr)
        self.assertIn("not covered by the run's DP guarantee", refused.stderr)
        self.assertIn("--allow-uncovered-categories", refused.stderr)
        self.assertFalse(os.path.exists(self.out("private_refused")))
        allowed = generate("--model", self.private, "--records", "2", "--output", self.out("private_allowed"),
                           "--constrain-categories", "--allow-uncovered-categories", "--max-new-tokens", "400",
                           "--invalid-fraction-threshold", "1")
        self.assertEqual(allowed.returncode, 0, allowed.stderr)
        summary = json.loads(read(os.path.join(self.out("private_allowed"), "generation.json")))
        self.assertIn("outside the DP guarantee", summary["categories"])

    def test_a_signal_writes_the_records_so_far(self):
        import signal
        for sig, code in ((signal.SIGTERM, 7), (signal.SIGUSR1, 75)):
            out = self.out("signalled_%d" % code)
            job = subprocess.Popen([binary("nss_generate"), "--model", self.trained, "--records", "1000000000",
                                    "--output", out], stderr=subprocess.PIPE, text=True)
            for line in job.stderr:  # generating once the start line is out
                if "[records]" in line:
                    break
            job.send_signal(sig)
            rest = job.stderr.read()
            job.stderr.close()
            self.assertEqual(job.wait(timeout=60), code, rest)
            self.assertIn("received: wrote the", rest)
            summary = json.loads(read(os.path.join(out, "generation.json")))
            self.assertFalse(summary["complete"])
            rows = read(os.path.join(out, "synthetic.csv")).splitlines()
            self.assertEqual(rows[0], ",".join(COLUMNS))
            self.assertEqual(len(rows) - 1, summary["valid_records"])

    def test_misuse_is_a_usage_error(self):
        out = self.out("misuse")
        cases = [
            (["--model", self.trained, "--records", "5"], "--records needs --output DIR"),
            (["--model", self.trained, "--records", "0", "--output", out], "--records must be in [1, "),
            (["--model", self.trained, "--records", "-3", "--output", out], "--records must be in [1, "),
            (["--model", self.trained, "--records", "99999999999999999999", "--output", out], "--records"),
            (["--model", self.trained, "--records", "5", "--prompt", "x", "--output", out], "exactly one of"),
            (["--model", self.trained, "--records", "5", "--stop", "}", "--output", out], "--stop does not apply"),
            (["--model", self.trained, "--records", "5", "--output", out, "--invalid-fraction-threshold", "1.5"],
             "--invalid-fraction-threshold must be in [0, 1]"),
            (["--model", self.trained, "--records", "5", "--output", out, "--patience", "0"], "--patience must be"),
            (["--model", self.trained, "--records", "5", "--output", out, "--max-new-tokens", "12"],
             "--max-new-tokens 12 cannot hold a record of this table: the shortest takes at least "),
            (["--model", self.trained, "--records", "5", "--output", out, "--constrain", "none",
              "--constrain-categories"], "--constrain-categories needs --constrain schema"),
            (["--model", self.trained, "--records", "5", "--output", out, "--allow-uncovered-categories"],
             "--allow-uncovered-categories without --constrain-categories"),
            (["--model", self.trained, "--records", "5", "--output", out, "--constrain", "json"],
             "--constrain json: unknown"),
            (["--model", self.trained, "--prompt", "x", "--constrain", "schema"], "--constrain applies to --records"),
            (["--model", self.trained, "--records", "5", "--output", out, "--dtype", "fp16"],
             "--dtype must be auto, fp32 or bf16"),
            (["--model", self.trained, "--records", "5", "--output", os.path.join(self.trained, "metadata.json")],
             "records output directory"),
        ]
        for args, message in cases:
            proc = generate(*args)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertIn(message, proc.stderr, args)
        # A KV cache no memory holds (an address-space limit stands in for a
        # small node): exit 3 naming its size and the settings to lower.
        proc = subprocess.run(["sh", "-c", 'ulimit -v 4000000 && exec "$0" "$@"', binary("nss_generate"),
                               "--model", self.trained, "--records", "5", "--output", self.out("huge_batch"),
                               "--batch-size", "65536", "--max-new-tokens", "900"],
                              capture_output=True, text=True, timeout=600)
        self.assertEqual(proc.returncode, 3, proc.stderr[-3000:])
        self.assertRegex(proc.stderr, r"the KV cache of 65536 rows x \d+ positions \(\d+ layers, \d+ KV heads of "
                                      r"\d+\) takes [\d.]+ GiB, more than the cpu could allocate")
        self.assertIn("--batch-size, pipeline.batch_size", proc.stderr)
        self.assertNotIn("frame #", proc.stderr)
        # A second job on a directory a live job writes to.
        busy = self.out("busy")
        first = subprocess.Popen([binary("nss_generate"), "--model", self.trained, "--records", "1000000000",
                                  "--output", busy], stderr=subprocess.PIPE, text=True)
        try:
            for line in first.stderr:  # the first job holds the lock once it generates
                if "[records]" in line:
                    break
            proc = generate("--model", self.trained, "--records", "5", "--output", busy)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("is in use by a live job", proc.stderr)
            self.assertIn("--output DIR", proc.stderr)
        finally:
            first.kill()
            first.wait()
            first.stderr.close()

    def test_a_model_not_trained_on_records_is_refused(self):
        data = os.path.join(self.tmp, "text.txt")
        with open(data, "w") as f:
            f.write("plain text for a plain model\n" * 200)
        h5 = os.path.join(self.tmp, "text.h5")
        prepared = subprocess.run([binary("nss_prepare_data"), "--input", data, "--output", h5], capture_output=True,
                                  text=True)
        self.assertEqual(prepared.returncode, 0, prepared.stderr)
        step = self.train(h5, "text_model", 1)
        proc = generate("--model", step, "--records", "5", "--output", self.out("refused"))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("was trained on 'text' data", proc.stderr)
        self.assertEqual(proc.stderr.count("nss_generate: error"), 1, proc.stderr)  # agreed, said once
        self.assertNotIn("MPI_ABORT", proc.stderr)
        self.assertFalse(os.path.exists(self.out("refused")))


if __name__ == "__main__":
    unittest.main()
