"""nss_hpc trains on answers only (docs/data.md "Instruction and record data",
docs/architecture.md "One optimizer step"): on an sft dataset made by
nss_prepare_data the loss is the mean over the target tokens, the same at 1, 2
and 4 ranks; metrics.jsonl reports target_tokens; validation and nss_eval
score the answers; the checkpoint records the dataset's preparation; a held-out
set without a target is exit 4 on every rank. With data.packing documents
(whole examples packed into rows, attention kept inside each) the same holds,
and a run saved by 4 ranks in the middle of a packed epoch resumes on 2 with
the uninterrupted run's losses."""
import json
import os
import random
import subprocess
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, binary, mpirun, remove, scratch  # noqa: E402

NSS = binary("nss_hpc")
CONFIG = os.path.join(SOURCE, "configs", "run.yaml")


def sft_lines(count, seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        a, b = rng.randrange(100), rng.randrange(100)
        lines.append(json.dumps({"prompt": "Question: what is %d plus %d? Answer: " % (a, b), "completion": str(a + b)}))
    return "\n".join(lines) + "\n"


def prepare_sft(directory, name, count, seed):
    source = os.path.join(directory, name + ".jsonl")
    with open(source, "w") as f:
        f.write(sft_lines(count, seed))
    out = os.path.join(directory, name + ".h5")
    result = subprocess.run([binary("nss_prepare_data"), "--format", "sft", "--input", source, "--output", out],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def step_records(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return [r for r in map(json.loads, f) if "event" not in r and "step" in r], None


class SftTrainingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("sft_training")
        cls.train = prepare_sft(cls.tmp, "train", 1500, 1)
        cls.val = prepare_sft(cls.tmp, "val", 200, 2)

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def run_nss(self, ranks, name, *sets):
        run_dir = os.path.join(self.tmp, name)
        args = [NSS, CONFIG, "--set", "run.output_dir=" + run_dir, "--set", "data.path=" + self.train,
                "--set", "eval.path=" + self.val, "--set", "data.seq_len=64", "--set", "logging.interval_steps=1"]
        for s in sets:
            args += ["--set", s]
        return mpirun(ranks, args, timeout=600), run_dir

    def test_answers_only_same_at_one_two_and_four_ranks(self):
        losses = {}
        for ranks in (1, 2, 4):
            proc, run_dir = self.run_nss(ranks, "ranks_%d" % ranks, "training.max_steps=6",
                                         "training.micro_batch_size=%d" % (8 // ranks // 2 or 1),
                                         "eval.interval_steps=6", "eval.batches=2")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            steps, _ = step_records(run_dir)
            losses[ranks] = [(r["loss"], r["target_tokens"]) for r in steps]
            for r in steps:
                # Prompts of ~40 bytes, answers of 1-3 digits and EOS: a minority of the labels.
                self.assertGreater(r["target_tokens"], 0)
                self.assertLess(r["target_tokens"], 0.3 * 8 * 64)
        for ranks in (2, 4):
            for (a, ta), (b, tb) in zip(losses[1], losses[ranks]):
                self.assertEqual(ta, tb)
                self.assertAlmostEqual(a, b, delta=1e-5 * abs(a))

        run_dir = os.path.join(self.tmp, "ranks_2")
        with open(os.path.join(run_dir, "metrics.jsonl")) as f:
            evals = [r for r in map(json.loads, f) if r.get("event") == "eval"]
        self.assertEqual(len(evals), 1)
        step = os.path.join(run_dir, "checkpoints", "step_00000006")
        with open(os.path.join(step, "metadata.json")) as f:
            dataset = json.load(f)["state"]["dataset"]
        self.assertEqual((dataset["format"], dataset["tokenizer"]), ("sft", "byte-level"))

        # nss_eval scores the answers of the held-out set: the validation's number.
        scored = subprocess.run([binary("nss_eval"), "--model", step, "--data", self.val, "--seq-len", "64",
                                 "--batches", "2", "--batch-size", "8"], capture_output=True, text=True)
        self.assertEqual(scored.returncode, 0, scored.stderr)
        result = json.loads(scored.stdout)
        with h5py.File(self.val, "r") as f:
            mask = f["loss_mask"][...]
        expected_targets = sum(int(mask[i * 64 + 1:i * 64 + 65].sum()) for i in range(16))
        self.assertEqual(result["tokens"], expected_targets)
        self.assertAlmostEqual(result["loss"], evals[0]["val_loss"], delta=1e-5 * evals[0]["val_loss"])

    def test_packed_rows_same_at_any_world_size_and_resume_mid_epoch(self):
        packed = ["data.packing=documents", "data.long_documents=split", "data.seq_len=128",
                  "eval.interval_steps=10", "eval.batches=2", "checkpoint.interval_steps=4"]
        losses = {}
        for ranks in (1, 2, 4):
            proc, run_dir = self.run_nss(ranks, "packed_%d" % ranks, "training.max_steps=10",
                                         "training.micro_batch_size=%d" % (8 // ranks // 2 or 1), *packed)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertIn("data.packing", proc.stdout + proc.stderr)
            steps, _ = step_records(run_dir)
            losses[ranks] = [(r["loss"], r["target_tokens"]) for r in steps]
        for ranks in (2, 4):
            for (a, ta), (b, tb) in zip(losses[1], losses[ranks]):
                self.assertEqual(ta, tb)
                self.assertAlmostEqual(a, b, delta=1e-5 * abs(a))
        # ~3 examples a row: far more targets per step than one example a row.
        self.assertGreater(sum(t for _, t in losses[1]) / 10, 60)
        # 1500 examples in ~500 rows: 10 steps of 8 rows stay inside epoch 0.
        step4 = os.path.join(self.tmp, "packed_4", "checkpoints", "step_00000004")
        with open(os.path.join(step4, "metadata.json")) as f:
            state = json.load(f)["state"]
        self.assertEqual((state["data"]["epoch"], state["data"]["cursor"]), (0, 32))
        proc, run_dir = self.run_nss(2, "packed_resumed", "training.max_steps=10", "training.micro_batch_size=2",
                                     "checkpoint.resume=" + step4, *packed)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("saved by 4 ranks, now 2", proc.stdout + proc.stderr)
        resumed = [(r["loss"], r["target_tokens"]) for r in step_records(run_dir)[0]]
        self.assertEqual([t for _, t in resumed], [t for _, t in losses[4][4:]])
        for (a, _), (b, _) in zip(resumed, losses[4][4:]):
            self.assertAlmostEqual(a, b, delta=1e-5 * abs(a))

        # nss_eval --packing documents scores the rows validation scored.
        with open(os.path.join(self.tmp, "packed_2", "metrics.jsonl")) as f:
            val_loss = [r for r in map(json.loads, f) if r.get("event") == "eval"][-1]["val_loss"]
        step = os.path.join(self.tmp, "packed_2", "checkpoints", "step_00000010")
        scored = subprocess.run([binary("nss_eval"), "--model", step, "--data", self.val, "--seq-len", "128",
                                 "--batches", "2", "--batch-size", "8", "--packing", "documents",
                                 "--long-documents", "split"], capture_output=True, text=True)
        self.assertEqual(scored.returncode, 0, scored.stderr)
        self.assertAlmostEqual(json.loads(scored.stdout)["loss"], val_loss, delta=1e-5 * val_loss)
        windows = subprocess.run([binary("nss_eval"), "--model", step, "--data", self.val, "--seq-len", "128",
                                  "--batches", "2", "--batch-size", "8"], capture_output=True, text=True)
        self.assertNotAlmostEqual(json.loads(windows.stdout)["loss"], val_loss, delta=1e-3)
        bad = subprocess.run([binary("nss_eval"), "--model", step, "--data", self.val, "--packing", "rows"],
                             capture_output=True, text=True)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("use one of: windows, documents, none", bad.stderr)

    def test_held_out_set_without_targets_is_exit_4_everywhere(self):
        silent = os.path.join(self.tmp, "silent.h5")
        with h5py.File(self.val, "r") as f, h5py.File(silent, "w") as g:
            g.create_dataset("tokens", data=f["tokens"][...])
            g.create_dataset("loss_mask", data=np.zeros(len(f["tokens"]), dtype=np.uint8))
        proc, _ = self.run_nss(2, "silent", "training.max_steps=2", "eval.interval_steps=1", "eval.path=" + silent,
                               "preflight.enabled=false")
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertIn("hold no target token", proc.stdout + proc.stderr)
        # The preflight says so before training, naming the check.
        proc, _ = self.run_nss(2, "silent_preflight", "training.max_steps=2", "eval.interval_steps=1",
                               "eval.path=" + silent)
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertIn("eval.targets", proc.stdout + proc.stderr)
        self.assertIn("0 of 2048 labels are targets", proc.stdout + proc.stderr)

    def test_malformed_masks_and_offsets_are_exit_4(self):
        cases = {
            "short_mask": lambda g, n: g.create_dataset("loss_mask", data=np.ones(n - 1, dtype=np.uint8)),
            "float_mask": lambda g, n: g.create_dataset("loss_mask", data=np.ones(n, dtype=np.float32)),
            "bad_offsets": lambda g, n: g.create_dataset("document_offsets", data=np.array([0, 5, 5, n], dtype=np.int64)),
            "offsets_short": lambda g, n: g.create_dataset("document_offsets", data=np.array([0, n - 1], dtype=np.int64)),
        }
        messages = {"short_mask": "entries, not", "float_mask": "must hold uint8",
                    "bad_offsets": "document 1 is empty or reversed", "offsets_short": "not 0 to"}
        with h5py.File(self.val, "r") as f:
            tokens = f["tokens"][...]
        for name, damage in cases.items():
            with self.subTest(name):
                path = os.path.join(self.tmp, name + ".h5")
                with h5py.File(path, "w") as g:
                    g.create_dataset("tokens", data=tokens)
                    damage(g, len(tokens))
                probe = subprocess.run([binary("token_dataset_probe"), path], capture_output=True, text=True)
                self.assertEqual(probe.returncode, 4, probe.stderr)
                self.assertIn(messages[name], probe.stderr)


if __name__ == "__main__":
    unittest.main()
