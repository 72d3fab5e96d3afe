"""QLoRA through the real binaries (training.lora.quantize_base: nf4 with
double quantisation) on a pretrained Hugging Face directory: a run at 2 ranks
saved at step 4 resumes at 1 and at 3 ranks with the uninterrupted run's
losses; a resume with other quantisation settings is exit 5 naming the key;
nf4 without LoRA, and double_quant without nf4, are exit 2; the preflight passes (the
measured step and the parameter count with an NF4 base) and reports the
base's bytes per parameter; nss_eval of a
QLoRA step scores it as trained (the NF4 base) by default, exactly like its
`nss_consolidate --merge-lora --dequantized-base` export, and with
`--quantize none` exactly like its `--merge-lora` export onto the original
base; the training log and preflight.json report the quantised base. A QLoRA step
fine-tuned on a records table samples records under --constrain schema (the
default) with exactly the table's columns, none invalid unless cut off at
--max-new-tokens, where the same sampling unconstrained breaks the schema;
greedy constrained records are the unconstrained ones when those are valid."""
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "model"))
from nss_e2e import (RECORD_COLUMNS, binary, prepare_records_dataset, prepare_text_dataset,  # noqa: E402
                     read_records_output, remove, scratch, step_losses, train)
from hf_files import llama_config, random_llama_weights, write_model_dir  # noqa: E402

STEPS = 8
QLORA = ["training.lora.enabled=true", "training.lora.rank=4",
         "training.lora.targets=[q_proj,v_proj,down_proj]",
         "training.lora.quantize_base=nf4", "training.lora.double_quant=true"]
# Records: adapters on all seven projections, long enough (about 5 s on one
# core) that greedy decoding writes the table's rows unconstrained.
RECORDS_STEPS = 300
RECORDS_QLORA = ["training.lora.enabled=true", "training.lora.rank=8",
                 "training.lora.targets=[q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj]",
                 "training.lora.quantize_base=nf4", "training.lora.double_quant=true"]


def run(args, timeout=300):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


class QloraTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("qlora")
        cls.data = prepare_text_dataset(cls.tmp)
        cls.base = os.path.join(cls.tmp, "base")
        config = llama_config(hidden=64, intermediate=160, layers=2, heads=4, kv_heads=2, vocab=258)
        write_model_dir(cls.base, config, random_llama_weights(config, seed=3, scale=0.1))
        cls.reference = cls.train(cls, 2, "uninterrupted")[0]
        cls.records_step = cls.train_records(cls)

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def train(self, ranks, name, *sets, expect=0):
        run_dir = os.path.join(self.tmp, name)
        fixed = ["data.path=" + self.data,
                 "model.from_pretrained=" + self.base,
                 "eval.interval_steps=0",
                 "data.seq_len=32",
                 "training.global_batch_size=6",
                 "training.micro_batch_size=1",
                 "training.max_steps=%d" % STEPS,
                 "training.warmup_steps=2",
                 "logging.interval_steps=1",
                 "checkpoint.interval_steps=4",
                 "preflight.enabled=false"]
        return run_dir, train(ranks, run_dir, fixed + list(QLORA) + list(sets), expect=expect)

    def train_records(self):
        run_dir = os.path.join(self.tmp, "records")
        train(1, run_dir, ["data.path=" + prepare_records_dataset(self.tmp),
                           "model.from_pretrained=" + self.base,
                           "eval.interval_steps=0",
                           "data.seq_len=64",
                           "training.global_batch_size=8",
                           "training.micro_batch_size=8",
                           "training.max_steps=%d" % RECORDS_STEPS,
                           "training.warmup_steps=5",
                           "training.lr=1e-2",
                           "logging.interval_steps=50",
                           "checkpoint.interval_steps=0",
                           "preflight.enabled=false"] + RECORDS_QLORA)
        return os.path.join(run_dir, "checkpoints", "step_%08d" % RECORDS_STEPS)

    def generate_records(self, name, *flags):
        out = os.path.join(self.tmp, name)
        proc = run([binary("nss_generate"), "--model", self.records_step, "--records", "8", "--output", out,
                    "--max-new-tokens", "48", *flags])
        return proc, out

    def step(self, number):
        return os.path.join(self.reference, "checkpoints", "step_%08d" % number)

    def evaluate(self, model, *extra):
        proc = run([binary("nss_eval"), "--model", model, "--data", self.data, "--seq-len", "32",
                    *extra])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)["loss"], proc.stderr

    def export(self, name, *flags):
        out = os.path.join(self.tmp, name)
        proc = run([binary("nss_consolidate"), self.step(STEPS), "--output", out, "--format", "hf",
                    *flags])
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        return out

    def test_resume_at_another_world_size_continues_the_same_run(self):
        reference = step_losses(self.reference)
        self.assertEqual(sorted(reference), list(range(1, STEPS + 1)))
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                run_dir, output = self.train(ranks, "resume_%d" % ranks,
                                             "checkpoint.resume=" + self.step(4))
                self.assertIn("saved by 2 ranks, now %d" % ranks, output)
                losses = step_losses(run_dir)
                self.assertEqual(sorted(losses), list(range(5, STEPS + 1)))
                for step in range(5, STEPS + 1):
                    self.assertAlmostEqual(losses[step], reference[step],
                                           delta=1e-5 * reference[step], msg="step %d" % step)

    def test_other_quantisation_settings_are_refused(self):
        for key, sets in (("quantize_base", ["training.lora.quantize_base=none",
                                             "training.lora.double_quant=false"]),
                          ("double_quant", ["training.lora.double_quant=false"])):
            with self.subTest(key=key):
                _, output = self.train(2, "other_%s" % key, "checkpoint.resume=" + self.step(4),
                                       *sets, expect=5)
                self.assertIn("training.lora." + key, output)
                self.assertIn("another base quantisation", output)

    def test_misplaced_quantisation_keys_are_usage_errors(self):
        _, output = self.train(1, "no_lora", "training.lora.enabled=false", expect=2)
        self.assertIn("training.lora.quantize_base", output)
        self.assertIn("training.lora.enabled", output)
        _, output = self.train(1, "dq_alone", "training.lora.quantize_base=none", expect=2)
        self.assertIn("training.lora.double_quant", output)

    def test_eval_scores_the_step_as_trained_and_the_exports_say_which_base(self):
        as_trained, log = self.evaluate(self.step(STEPS))
        self.assertIn("NF4 with double quantisation", log)
        on_original, _ = self.evaluate(self.step(STEPS), "--quantize", "none")
        self.assertNotEqual(as_trained, on_original)
        dequantized = self.export("merged_dequantized", "--merge-lora", "--dequantized-base")
        original = self.export("merged_original", "--merge-lora")
        self.assertAlmostEqual(self.evaluate(dequantized)[0], as_trained, delta=1e-5 * as_trained)
        self.assertAlmostEqual(self.evaluate(original)[0], on_original, delta=1e-5 * on_original)
        # The merged original export, quantised on load, is not the trained model (the
        # adapters were trained on the round trip of W, not of W + BA).
        requantized, _ = self.evaluate(original, "--quantize", "nf4", "--double-quant")
        self.assertNotEqual(requantized, as_trained)

    def test_a_non_finite_base_weight_on_one_rank_ends_every_rank_with_exit_4(self):
        # The last element of the last projection lies in the last rank's slice:
        # rank 0 must not wait alone in double quantisation's all-gather.
        config = llama_config(hidden=64, intermediate=160, layers=2, heads=4, kv_heads=2, vocab=258)
        weights = random_llama_weights(config, seed=3, scale=0.1)
        weights["model.layers.1.mlp.down_proj.weight"][-1, -1] = float("nan")
        damaged = os.path.join(self.tmp, "damaged_base")
        write_model_dir(damaged, config, weights)
        start = time.monotonic()
        _, output = self.train(2, "damaged", "model.from_pretrained=" + damaged, expect=4)
        self.assertLess(time.monotonic() - start, 120)
        self.assertIn("model.layers.1.mlp.down_proj.weight", output)
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)

    def test_preflight_passes_and_reports_the_quantised_base(self):
        run_dir, output = self.train(2, "preflight", "preflight.enabled=true",
                                     "training.max_steps=1")
        with open(os.path.join(run_dir, "preflight.json")) as f:
            report = json.load(f)
        self.assertEqual(report["verdict"], "go", output)
        checks = {c["id"]: c for c in report["checks"]}
        self.assertEqual(checks["model.parameters"]["status"], "pass")
        self.assertIn("projections in NF4 with double quantisation", checks["memory.model"]["message"])
        # fp32 embedding, head and norms beside 4.127-bit projections: well under fp32's 4.
        self.assertLess(report["memory"]["base_bytes_per_parameter"], 3.0)
        self.assertGreater(report["memory"]["base_bytes_per_parameter"], 0.5)
        with open(os.path.join(run_dir, "metrics.jsonl")) as f:
            memory = next(json.loads(l) for l in f if '"memory"' in l)
        self.assertGreater(memory["quantized_base_bytes"], 0)

    def test_generate_samples_the_step_as_trained(self):
        proc = run([binary("nss_generate"), "--model", self.step(STEPS), "--prompt", "The ",
                    "--max-new-tokens", "4", "--temperature", "0"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("NF4 with double quantisation", proc.stderr)
        self.assertTrue(json.loads(proc.stdout.splitlines()[0])["text"] is not None)

    def test_constrained_records_of_a_qlora_step_have_the_tables_columns(self):
        proc, out = self.generate_records("records_schema", "--temperature", "0.8", "--seed", "3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("NF4 with double quantisation", proc.stderr)  # sampled on the base as trained
        summary, invalid, records = read_records_output(out)
        self.assertEqual(summary["constrain"], "schema")  # the default
        self.assertTrue(summary["complete"])
        self.assertEqual(summary["valid_records"], 8)
        self.assertEqual(summary["invalid_records"], len(invalid))
        # A record that ended before --max-new-tokens is valid: only cut-off ones are not.
        self.assertTrue(all("cut off at --max-new-tokens" in r["reason"] for r in invalid), invalid)
        self.assertEqual(len(records), 8)
        for record in records:
            self.assertEqual(list(record), RECORD_COLUMNS, record)
            self.assertIsInstance(record["temp"], int, record)
            self.assertIsInstance(record["city"], str, record)
            self.assertIsInstance(record["rain"], str, record)
        self.assertEqual(summary["value_limits"]["temp"]["max_integer_digits"], 2)
        # The same sampling unconstrained: the model writes what no schema allows
        # (it is stopped early, exit 4, with the records it judged).
        proc, out = self.generate_records("records_none", "--temperature", "0.8", "--seed", "3",
                                          "--constrain", "none")
        self.assertIn(proc.returncode, (0, 4), proc.stderr)
        summary, invalid, _ = read_records_output(out)
        self.assertEqual(summary["constrain"], "none")
        self.assertTrue(any("cut off" not in r["reason"] for r in invalid), invalid)

    def test_greedy_constrained_records_are_the_unconstrained_ones(self):
        outputs = {}
        for constrain in ("schema", "none"):
            proc, out = self.generate_records("greedy_" + constrain, "--temperature", "0",
                                              "--constrain", constrain)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            outputs[constrain] = read_records_output(out)
            with open(os.path.join(out, "synthetic.csv")) as f:
                outputs[constrain] += (f.read(),)
        # Trained long enough that greedy decoding keeps to the schema on its own...
        self.assertEqual(outputs["none"][1], [], "greedy unconstrained records are invalid")
        self.assertEqual(outputs["none"][0]["valid_records"], 8)
        # ...so the mask removes nothing greedy decoding picks: the same records.
        self.assertEqual(outputs["schema"][1], [])
        self.assertEqual(outputs["schema"][2], outputs["none"][2])
        self.assertEqual(outputs["schema"][3], outputs["none"][3])
        record = outputs["schema"][2][0]
        self.assertIn(record["city"], ("Oslo", "Lima", "Pune", "Kyiv"), record)
        self.assertIn(record["rain"], ("yes", "no"), record)
        self.assertTrue(10 <= record["temp"] < 30, record)

    def test_refusals_of_the_tools(self):
        proc = run([binary("nss_consolidate"), self.step(STEPS), "--output",
                    os.path.join(self.tmp, "x"), "--format", "hf", "--dequantized-base"])
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--merge-lora", proc.stderr)
        proc = run([binary("nss_eval"), "--model", self.step(STEPS), "--data", self.data,
                    "--quantize", "nf8"])
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("use --quantize auto, none or nf4", proc.stderr)


if __name__ == "__main__":
    unittest.main()
