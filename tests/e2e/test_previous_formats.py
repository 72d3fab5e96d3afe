"""Files an earlier build wrote still load: the committed fixtures under
tests/fixtures/formats_<revision>/ (made by tests/fixtures/make_format_fixture.sh
with that build) are token files and checkpoint steps. The current build
verifies each step, scores it with the loss and greedy tokens the earlier
build printed, resumes training from it, exports it, and trains on the token
files."""
import glob
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from nss_e2e import SOURCE, binary, mpirun, remove, scratch  # noqa: E402

FIXTURES = sorted(glob.glob(os.path.join(SOURCE, "tests", "fixtures", "formats_*")))


def run(*args, timeout=300):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)


class PreviousFormatsTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(FIXTURES, "no tests/fixtures/formats_* directory")
        self.tmp = scratch("previous_formats")
        self.addCleanup(remove, self.tmp)

    def each_step(self):
        for fixture in FIXTURES:
            with open(os.path.join(fixture, "expected.json")) as f:
                expected = json.load(f)
            for name, step in expected["steps"].items():
                run_dir = os.path.join(fixture, "runs", name)
                step_dir = os.path.join(run_dir, "checkpoints", "step_%08d" % step["step"])
                yield fixture, name, run_dir, step_dir, step

    def test_each_step_verifies_and_scores_what_the_earlier_build_scored(self):
        for fixture, name, _, step_dir, step in self.each_step():
            with self.subTest(fixture=os.path.basename(fixture), step=name):
                verified = run(binary("nss_ckpt"), "verify", step_dir)
                self.assertEqual(verified.returncode, 0, verified.stdout + verified.stderr)
                scored = run(binary("nss_eval"), "--model", step_dir, "--data",
                             os.path.join(fixture, "data", "records.h5"), "--seq-len", 64, "--batches", 2,
                             "--batch-size", 4, "--packing", "none")
                self.assertEqual(scored.returncode, 0, scored.stderr)
                now, then = json.loads(scored.stdout), json.loads(step["eval_output"])
                self.assertEqual(now["tokens"], then["tokens"])
                self.assertAlmostEqual(now["loss"], then["loss"], delta=1e-6 * abs(then["loss"]))
                sampled = run(binary("nss_generate"), "--model", step_dir, "--prompt", "Row of",
                              "--max-new-tokens", 12, "--temperature", 0)
                self.assertEqual(sampled.returncode, 0, sampled.stderr)
                self.assertEqual(json.loads(sampled.stdout)["tokens"],
                                 json.loads(step["greedy_output"])["tokens"])

    def test_each_run_resumes_from_its_step_at_another_world_size(self):
        for fixture, name, run_dir, _, step in self.each_step():
            with self.subTest(fixture=os.path.basename(fixture), step=name):
                copy = os.path.join(self.tmp, os.path.basename(fixture) + "_" + name)
                shutil.copytree(run_dir, copy)
                last = step["step"] + 2
                # One rank: a tensor-parallel step resumes without tensor parallelism.
                proc = mpirun(1, [binary("nss_hpc"), os.path.join(copy, "config.resolved.yaml"), "--set",
                                  "run.output_dir=" + copy, "--set", "checkpoint.dir=",
                                  "--set", "parallel.tensor_parallel_size=1",
                                  "--set", "data.path=" + os.path.join(fixture, "data", "records.h5"),
                                  "--set", "training.max_steps=%d" % last, "--set",
                                  "checkpoint.interval_steps=%d" % last])
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertIn("resum", proc.stdout + proc.stderr)
                with open(os.path.join(copy, "metrics.jsonl")) as f:
                    steps = [json.loads(line)["step"] for line in f if '"loss"' in line]
                self.assertEqual(steps[-2:], [step["step"] + 1, last])
                verified = run(binary("nss_ckpt"), "verify",
                               os.path.join(copy, "checkpoints", "step_%08d" % last))
                self.assertEqual(verified.returncode, 0, verified.stdout + verified.stderr)

    def test_each_step_exports_to_hugging_face(self):
        for fixture, name, _, step_dir, _ in self.each_step():
            with self.subTest(fixture=os.path.basename(fixture), step=name):
                output = os.path.join(self.tmp, os.path.basename(fixture) + "_" + name + "_hf")
                exported = run(binary("nss_consolidate"), step_dir, "--output", output, "--format", "hf")
                self.assertEqual(exported.returncode, 0, exported.stdout + exported.stderr)
                # A LoRA step exports its adapters (PEFT), a full step the model.
                written = "adapter_config.json" if "lora" in name else "config.json"
                self.assertTrue(os.path.isfile(os.path.join(output, written)), os.listdir(output))

    def test_the_token_files_train(self):
        for fixture in FIXTURES:
            for data in ("text.h5", "records.h5"):
                with self.subTest(fixture=os.path.basename(fixture), data=data):
                    out = os.path.join(self.tmp, os.path.basename(fixture) + "_" + data)
                    proc = mpirun(2, [binary("nss_hpc"), os.path.join(SOURCE, "configs", "run.yaml"), "--set",
                                      "run.output_dir=" + out, "--set",
                                      "data.path=" + os.path.join(fixture, "data", data), "--set",
                                      "data.seq_len=32", "--set", "eval.interval_steps=0", "--set",
                                      "training.max_steps=2", "--set", "checkpoint.interval_steps=0"])
                    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                    with open(os.path.join(out, "preflight.json")) as f:
                        self.assertIn('"go"', f.read())

    def test_the_text_file_holds_its_text_byte_for_byte(self):
        import h5py
        for fixture in FIXTURES:
            with h5py.File(os.path.join(fixture, "data", "text.h5"), "r") as f:
                tokens = f["tokens"][:]
                bos, eos = int(f.attrs["bos_token_id"]), int(f.attrs["eos_token_id"])
            with open(os.path.join(fixture, "data", "text.txt"), "rb") as f:
                text = f.read()
            self.assertEqual(bytes(int(t) for t in tokens if t not in (bos, eos)), text)


if __name__ == "__main__":
    unittest.main()
