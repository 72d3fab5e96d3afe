"""Tensor parallelism through the real trainer (configs/run.yaml's tiny Llama:
4 query heads over 2 key/value heads, a vocabulary of 258): trained at
(replicas, shard, tensor) = (1, 2, 2) on 4 ranks with its preflight, the
losses equal a single rank's; its step stores the column-split weights in
column blocks (format version 2) and verifies; resumed from it at (1, 4, 1),
(2, 1, 2) and (1, 1, 1) the run continues with the single rank's losses, and
nss_eval scores the step as it scores the single rank's; at T = 4 (the
key/value heads replicated) the losses are the same again; a private run
(DP-SGD) resumed at T = 2 has the losses, noised gradient norms and epsilon
of the run without it. Layouts and features tensor parallelism cannot take (NF4
parts that are not whole blocks, double quantisation) end with exit 2
naming the keys."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import (SOURCE, TextDataTest, binary, mpirun, prepare_records_dataset,  # noqa: E402
                     short_run_args, step_losses)

CONFIG = os.path.join(SOURCE, "configs", "run.yaml")
STEPS = 8


class TensorParallelTrainingTest(TextDataTest):
    SCRATCH_TAG = "tensor_parallel"

    def train(self, ranks, name, *sets, expect=0):
        run_dir = os.path.join(self.tmp, name)
        args = short_run_args(CONFIG, run_dir, self.data, STEPS, 64, 8,
                              ("checkpoint.interval_steps=4",) + sets)
        result = mpirun(ranks, args, timeout=600)
        output = result.stdout + result.stderr
        self.assertEqual(result.returncode, expect, output[-4000:])
        return run_dir, output

    def layout(self, ranks, group, tensor, name, *sets):
        return self.train(ranks, name, "parallel.shard_group_size=%d" % group,
                          "parallel.tensor_parallel_size=%d" % tensor, *sets)

    def single_rank(self):
        if "single" not in self.runs:
            self.runs["single"] = self.train(1, "single", "preflight.enabled=false")[0]
        return self.runs["single"]

    def tensor_parallel(self):
        if "tp" not in self.runs:
            self.runs["tp"] = self.layout(4, 2, 2, "tp")
        return self.runs["tp"]

    def assert_same_losses(self, losses, reference, steps):
        self.assertEqual(sorted(losses), list(steps))
        for step in steps:
            self.assertAlmostEqual(losses[step], reference[step], delta=1e-5 * reference[step],
                                   msg="step %d" % step)

    def test_tensor_parallel_run_equals_a_single_rank(self):
        run_dir, output = self.tensor_parallel()
        self.assertIn("tensor parallelism: tensor group", output)
        self.assertIn("preflight", output)
        self.assert_same_losses(step_losses(run_dir), step_losses(self.single_rank()),
                                range(1, STEPS + 1))
        # Four tensor ranks over two key/value heads: each head on two ranks.
        run_dir, _ = self.layout(4, 1, 4, "tp4", "preflight.enabled=false")
        self.assert_same_losses(step_losses(run_dir), step_losses(self.single_rank()),
                                range(1, STEPS + 1))

    def test_the_step_stores_whole_tensors_and_verifies(self):
        step = os.path.join(self.tensor_parallel()[0], "checkpoints", "step_%08d" % STEPS)
        with open(os.path.join(step, "metadata.json")) as f:
            index = json.load(f)
        self.assertEqual(index["version"], 2)
        tensors = index["tensors"]
        self.assertEqual(tensors["model.layers.0.self_attn.o_proj.weight"]["column_blocks"], 2)
        self.assertEqual(tensors["model.layers.0.mlp.down_proj.weight"]["shape"], [64, 176])
        self.assertNotIn("column_blocks", tensors["model.layers.0.self_attn.q_proj.weight"])
        self.assertEqual(tensors["model.embed_tokens.weight"]["shape"], [258, 64])
        for name, t in tensors.items():  # every element once: no padding, no copies
            covered = sorted((c["tensor_offset"], c["length"]) for c in t["chunks"])
            end = 0
            for offset, length in covered:
                self.assertEqual(offset, end, name)
                end += length
            numel = 1
            for d in t["shape"]:
                numel *= d
            self.assertEqual(end, numel, name)
        verified = subprocess.run([binary("nss_ckpt"), "verify", step], capture_output=True,
                                  text=True, timeout=120)
        self.assertEqual(verified.returncode, 0, verified.stdout + verified.stderr)
        # nss_eval reads the column blocks as the row-major tensors.
        scores = []
        for run_dir in (self.tensor_parallel()[0], self.single_rank()):
            scored = subprocess.run(
                [binary("nss_eval"), "--model",
                 os.path.join(run_dir, "checkpoints", "step_%08d" % STEPS),
                 "--data", self.data, "--seq-len", "64", "--batches", "2"],
                capture_output=True, text=True, timeout=300)
            self.assertEqual(scored.returncode, 0, scored.stdout + scored.stderr)
            scores.append(json.loads(scored.stdout)["loss"])
        self.assertAlmostEqual(scores[0], scores[1], delta=1e-5 * scores[1])

    def test_resume_at_any_layout_continues_the_same_run(self):
        reference = step_losses(self.single_rank())
        step4 = os.path.join(self.tensor_parallel()[0], "checkpoints", "step_00000004")
        for ranks, group, tensor in ((4, 4, 1), (4, 1, 2), (1, 1, 1)):
            with self.subTest(layout=(ranks // (group * tensor), group, tensor)):
                run_dir, output = self.layout(ranks, group, tensor,
                                              "resume_%d_%d_%d" % (ranks, group, tensor),
                                              "checkpoint.resume=" + step4,
                                              "preflight.enabled=false")
                self.assertIn("resumed from", output)
                self.assert_same_losses(step_losses(run_dir), reference, range(5, STEPS + 1))

    def test_a_private_run_resumes_with_tensor_parallelism(self):
        # The run's secret (its noise and Poisson sampling) lives in its
        # steps: resumed at T = 2 from step 4, steps 5-8 have the
        # uninterrupted run's losses, noised gradient norms and epsilon.
        records = prepare_records_dataset(self.tmp)  # one example a row
        private = ["data.path=" + records, "training.lora.enabled=true", "data.packing=none",
                   "privacy.enabled=true", "privacy.noise_multiplier=0.7",
                   "preflight.enabled=false"]
        whole, _ = self.train(2, "private", *private)
        step4 = os.path.join(whole, "checkpoints", "step_00000004")
        resumed, output = self.train(2, "private_tp", "parallel.tensor_parallel_size=2",
                                     "checkpoint.resume=" + step4, *private)
        self.assertIn("resumed from", output)
        runs = []
        for run_dir in (whole, resumed):
            with open(os.path.join(run_dir, "metrics.jsonl")) as f:
                records_of = [json.loads(line) for line in f if '"loss"' in line]
            runs.append({r["step"]: r for r in records_of if "event" not in r})
        self.assertEqual(sorted(runs[1]), list(range(5, STEPS + 1)))
        for step in range(5, STEPS + 1):
            one, two = runs[0][step], runs[1][step]
            self.assertAlmostEqual(two["loss"], one["loss"], delta=1e-5 * one["loss"])
            self.assertAlmostEqual(two["grad_norm"], one["grad_norm"], delta=1e-5 * one["grad_norm"])
            self.assertAlmostEqual(two["epsilon"], one["epsilon"], delta=1e-9)

    def test_layouts_and_features_it_cannot_take_are_usage_errors(self):
        cases = [
            (3, ["parallel.tensor_parallel_size=3"], "parallel.tensor_parallel_size 3",
             "use one of: 1, 2, 4"),
            (2, ["parallel.tensor_parallel_size=4"], "exceeds the 2 ranks", "tensor_parallel_size"),
            (2, ["parallel.tensor_parallel_size=2", "data.seq_len=63"], "data.seq_len=63",
             "sequence_parallel: false"),
            # o_proj's 64 input features over 2 ranks: half an NF4 block each.
            (2, ["parallel.tensor_parallel_size=2", "training.lora.enabled=true",
                 "training.lora.quantize_base=nf4"], "o_proj's input features (32 elements)",
             "quantize_base: none"),
            (2, ["parallel.tensor_parallel_size=2", "training.lora.enabled=true",
                 "training.lora.quantize_base=nf4", "training.lora.double_quant=true"],
             "training.lora.double_quant", "double_quant: false"),
            (4, ["parallel.tensor_parallel_size=2", "parallel.shard_group_size=3"],
             "parallel.shard_group_size=3", "shard_group_size can be 0"),
        ]
        for ranks, sets, problem, hint in cases:
            with self.subTest(sets=sets):
                _, output = self.train(ranks, "bad", "preflight.enabled=false", *sets, expect=2)
                self.assertIn(problem, output)
                self.assertIn(hint, output)


if __name__ == "__main__":
    unittest.main()
