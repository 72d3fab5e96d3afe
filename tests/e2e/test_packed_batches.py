"""The batch arithmetic of packed and private runs counts what packing makes
(rows), never windows, in the preflight, the trainer and the dataloader
alike; a run whose truncated rows keep no target is refused ("nothing to
learn") instead of training skipped steps, or a private run spending its
epsilon on noise. Real binaries on small sft files."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from nss_e2e import SOURCE, ScratchDirTest, binary, mpirun  # noqa: E402

CONFIG = os.path.join(SOURCE, "configs", "run.yaml")


class PackedBatchesTest(ScratchDirTest):
    SCRATCH_TAG = "packed_batches"

    def sft(self, name, examples):
        path = self.write(name + ".jsonl", "".join(json.dumps(e) + "\n" for e in examples).encode())
        data = self.path(name + ".h5")
        proc = subprocess.run([binary("nss_prepare_data"), "--input", path, "--output", data, "--format", "sft"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return data

    def short_examples(self):
        """64 examples of 17 to 33 tokens: 1,698 tokens, 26 windows of 65."""
        return self.sft("short", [{"prompt": "Q%d: what is %d+%d? " % (i, i, i % 9), "completion": "A: %d." % i}
                                  for i in range(64)])

    def train(self, data, *sets, ranks=2):
        run = self.path("run_%d" % len(os.listdir(self.dir)))
        args = [binary("nss_hpc"), CONFIG, "--set", "run.output_dir=" + run, "--set", "data.path=" + data,
                "--set", "data.seq_len=64", "--set", "eval.interval_steps=0", "--set", "training.max_steps=2",
                "--set", "checkpoint.interval_steps=2", "--set", "training.micro_batch_size=4"]
        for s in sets:
            args += ["--set", s]
        proc = mpirun(ranks, args)
        return proc.returncode, proc.stdout + proc.stderr, run

    def test_packed_rows_make_the_batch_where_windows_would_not(self):
        data = self.short_examples()
        for packing, batch in (("documents", 32), ("none", 32), ("none", 64)):
            for preflight in ("true", "false"):
                with self.subTest(packing=packing, batch=batch, preflight=preflight):
                    code, output, run = self.train(data, "data.packing=" + packing,
                                                   "training.global_batch_size=%d" % batch,
                                                   "preflight.enabled=" + preflight)
                    self.assertEqual(code, 0, output)
                    self.assertTrue(os.path.isdir(os.path.join(run, "checkpoints", "step_00000002")))
        code, output, _ = self.train(data, "data.packing=windows", "training.global_batch_size=32")
        self.assertEqual(code, 4, output)
        self.assertIn("26 windows of seq_len+1 = 65 tokens, but one global batch needs 32", output)

    def test_too_few_rows_are_named_as_rows_with_a_hint_for_packed_data(self):
        data = self.short_examples()
        for preflight in ("true", "false"):
            with self.subTest(preflight=preflight):
                code, output, _ = self.train(data, "data.packing=documents", "training.global_batch_size=64",
                                             "preflight.enabled=" + preflight)
                self.assertEqual(code, 4, output)
                self.assertIn("32 rows", output)
                self.assertIn("training.global_batch_size to at most 32", output)
                self.assertNotIn("windows", output.split("error:")[-1])

    def test_a_private_batch_of_every_example_is_allowed_and_a_larger_one_is_the_privacy_error(self):
        data = self.short_examples()
        private = ["data.packing=none", "training.lora.enabled=true", "privacy.enabled=true"]
        code, output, _ = self.train(data, "training.global_batch_size=64", *private)
        self.assertEqual(code, 0, output)
        self.assertIn("q = 1", output)
        for preflight in ("true", "false"):
            with self.subTest(preflight=preflight):
                code, output, _ = self.train(data, "training.global_batch_size=96", "preflight.enabled=" + preflight,
                                             *private)
                self.assertEqual(code, 4, output)
                self.assertIn("exceeds the privacy units of the data (64)", output)
                self.assertNotIn("windows", output.split("error:")[-1])

    def test_rows_that_keep_no_target_are_refused(self):
        data = self.sft("long", [{"prompt": "Context: " + "x" * 80 + " question %d?" % i,
                                  "completion": " answer %d" % i} for i in range(40)])
        runs = (("data.packing=none",), ("data.packing=documents",),
                ("data.packing=none", "preflight.enabled=false"),
                ("data.packing=none", "training.lora.enabled=true", "privacy.enabled=true"))
        for sets in runs:
            with self.subTest(sets=sets):
                code, output, run = self.train(data, "training.global_batch_size=8", *sets)
                self.assertEqual(code, 4, output)
                self.assertIn("nothing to learn", output)
                self.assertIn("truncation keeps each document's first seq_len+1 = 65 tokens", output)
                self.assertIn("data.long_documents: split", output)
                self.assertFalse(os.path.exists(os.path.join(run, "checkpoints", "latest")))
        code, output, _ = self.train(data, "training.global_batch_size=8", "data.packing=none",
                                     "data.long_documents=split")
        self.assertEqual(code, 0, output)
        self.assertIn("labels kept by packing are targets", output)


if __name__ == "__main__":
    unittest.main()
