"""Checkpoints through the real trainer: resuming at another world size
(4->2, 2->4, 4->3, 3->1) continues with the uninterrupted run's losses, also
from hybrid sharding (4 ranks in groups of 2 -> (2, 2), (3, 3), (4, full)); a run
killed with SIGKILL at a random moment during sync or async saves leaves only
committed steps that verify and resumes to the uninterrupted result; a
corrupted newest step is skipped loudly; a full disk does not stop training
(or stops it with exit 5 when checkpoint.fail_on_error); async and sync
checkpoints of a step are identical; a LoRA checkpoint refuses another base
(exit 5), and any checkpoint another model shape, naming what differs, without
falling back to older steps; a model-only resume (checkpoint.load_optimizer: false) restores the
weights and restarts the moments; nss_eval scores a step directory exactly like its consolidated
Hugging Face directory."""
import json
import os
import random
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import (MPIEXEC, SOURCE, TextDataTest, binary, kill_session, mpirun,  # noqa: E402
                     remove, short_run_args, step_losses)

CONFIG = os.path.join(SOURCE, "configs", "run.yaml")
STEPS = 12
KILL_STEPS = 40  # killed at a random step in 3..20, 20 or more steps before the end


def newest_logged_step(run_dir):
    """The newest step in a live run's metrics.jsonl (a line being written is skipped)."""
    newest = 0
    try:
        with open(os.path.join(run_dir, "metrics.jsonl")) as f:
            for line in f:
                try:
                    newest = max(newest, json.loads(line).get("step", 0))
                except ValueError:
                    pass
    except OSError:
        pass
    return newest


def committed_steps(checkpoints):
    if not os.path.isdir(checkpoints):
        return []
    return sorted(int(n[5:]) for n in os.listdir(checkpoints)
                  if n.startswith("step_") and not n.endswith((".tmp", ".old")))


def verify(path):
    return subprocess.run([binary("nss_ckpt"), "verify", path], capture_output=True, text=True, timeout=120)


class CheckpointTrainingTest(TextDataTest):
    SCRATCH_TAG = "ckpt_training"

    def args(self, run_dir, *sets):
        return short_run_args(CONFIG, run_dir, self.data, STEPS, 64, 12,
                              ("preflight.enabled=false",) + sets)

    def train(self, ranks, name, *sets, expect=0):
        run_dir = os.path.join(self.tmp, name)
        proc = mpirun(ranks, self.args(run_dir, *sets), timeout=600)
        self.assertEqual(proc.returncode, expect, proc.stdout + proc.stderr)
        return run_dir, proc.stdout + proc.stderr

    def uninterrupted(self, ranks):
        if ranks not in self.runs:
            self.runs[ranks] = self.train(ranks, "full_%d" % ranks)[0]
        return self.runs[ranks]

    def test_resume_at_another_world_size_continues_the_same_run(self):
        reference = step_losses(self.uninterrupted(2))
        for saved_by, resumed_by in ((4, 2), (2, 4), (4, 3), (3, 1)):
            with self.subTest(saved_by=saved_by, resumed_by=resumed_by):
                step6 = os.path.join(self.uninterrupted(saved_by), "checkpoints", "step_00000006")
                run_dir, output = self.train(resumed_by, "resume_%d_%d" % (saved_by, resumed_by),
                                             "checkpoint.resume=" + step6)
                self.assertIn("saved by %d ranks, now %d" % (saved_by, resumed_by), output)
                losses = step_losses(run_dir)
                self.assertEqual(sorted(losses), list(range(7, STEPS + 1)))
                for step in range(7, STEPS + 1):
                    self.assertAlmostEqual(losses[step], reference[step], delta=1e-5 * reference[step],
                                           msg="step %d" % step)

    def test_hybrid_sharding_checkpoint_resumes_at_any_layout(self):
        """4 ranks in shard groups of 2 train like full sharding; each replica
        writes half of its shard (every element once, from every rank); the
        step resumes at (2 ranks, G=2), (3, 3) and (4, full sharding)."""
        reference = step_losses(self.uninterrupted(2))
        hybrid, output = self.train(4, "hsdp_4_2", "parallel.shard_group_size=2")
        self.assertIn("hybrid sharding: shard group", output)
        losses = step_losses(hybrid)
        for step in range(1, STEPS + 1):
            self.assertAlmostEqual(losses[step], reference[step], delta=1e-5 * reference[step],
                                   msg="step %d" % step)
        step6 = os.path.join(hybrid, "checkpoints", "step_00000006")
        self.assertEqual(verify(step6).returncode, 0)
        with open(os.path.join(step6, "metadata.json")) as f:
            meta = json.load(f)
        writers = set()
        for name, tensor in meta["tensors"].items():
            numel = 1
            for d in tensor["shape"]:
                numel *= d
            spans = sorted((c["tensor_offset"], c["length"]) for c in tensor["chunks"])
            self.assertEqual(sum(length for _, length in spans), numel, name)
            end = 0
            for offset, length in spans:
                self.assertEqual(offset, end, "%s: a gap or an element written twice" % name)
                end = offset + length
            writers.update(c["file"] for c in tensor["chunks"])
        self.assertEqual(len(writers), 4, "every replica writes its share")
        for ranks, group in ((2, 2), (3, 3), (4, 0)):
            with self.subTest(ranks=ranks, group=group):
                run_dir, _ = self.train(ranks, "hsdp_resume_%d_%d" % (ranks, group),
                                        "checkpoint.resume=" + step6,
                                        "parallel.shard_group_size=%d" % group)
                resumed = step_losses(run_dir)
                self.assertEqual(sorted(resumed), list(range(7, STEPS + 1)))
                for step in range(7, STEPS + 1):
                    self.assertAlmostEqual(resumed[step], reference[step],
                                           delta=1e-5 * reference[step], msg="step %d" % step)

    def test_shard_group_size_that_does_not_divide_the_ranks_is_refused(self):
        _, output = self.train(3, "hsdp_refused", "parallel.shard_group_size=2", expect=2)
        self.assertIn("parallel.shard_group_size=2 does not divide the 3 ranks", output)
        self.assertIn("shard_group_size can be 0 (all ranks) or 1, 3", output)

    def test_model_only_resume_keeps_the_weights_and_restarts_the_moments(self):
        reference = step_losses(self.uninterrupted(2))
        step6 = os.path.join(self.uninterrupted(2), "checkpoints", "step_00000006")
        run_dir, output = self.train(2, "model_only", "checkpoint.resume=" + step6,
                                     "checkpoint.load_optimizer=false")
        self.assertIn("model weights only (checkpoint.load_optimizer: false)", output)
        losses = step_losses(run_dir)
        # Step 7's loss comes from the restored weights; its update uses fresh moments.
        self.assertAlmostEqual(losses[7], reference[7], delta=1e-6 * reference[7])
        self.assertNotAlmostEqual(losses[8], reference[8], delta=1e-6 * reference[8])

    def kill_during_training(self, name, *sets):
        """Starts a 2-rank run and SIGKILLs every process at a random moment
        after a random step past the first save (steps, not seconds: the
        moment must fall inside the run however fast the machine is)."""
        run_dir = os.path.join(self.tmp, name)
        checkpoints = os.path.join(run_dir, "checkpoints")
        args = [MPIEXEC, "-n", "2", "--oversubscribe"] + self.args(run_dir, *sets)
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        target = random.randint(3, KILL_STEPS - 20)
        deadline = time.monotonic() + 180
        while proc.poll() is None and time.monotonic() < deadline:
            if newest_logged_step(run_dir) >= target and committed_steps(checkpoints):
                break
            time.sleep(0.02)
        time.sleep(random.uniform(0.0, 0.1))  # anywhere inside a step or a save
        kill_session(proc.pid)
        proc.wait()
        return run_dir, checkpoints

    def test_sigkill_at_random_moments_then_resume(self):
        random.seed(7)
        long_run = ("training.max_steps=%d" % KILL_STEPS, "checkpoint.interval_steps=2")
        reference = step_losses(self.train(2, "kill_reference", *long_run)[0])
        for mode in ("false", "true"):
            with self.subTest(async_saves=mode):
                sets = long_run + ("checkpoint.async=" + mode,)
                run_dir, checkpoints = self.kill_during_training("kill_" + mode, *sets)
                steps = committed_steps(checkpoints)
                self.assertTrue(steps, "no step was committed before the kill")
                self.assertLess(max(steps), KILL_STEPS, "the run ended before the kill")
                for step in steps:
                    result = verify(os.path.join(checkpoints, "step_%08d" % step))
                    self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                with open(os.path.join(checkpoints, "latest")) as f:
                    latest = int(f.read().strip()[5:])
                self.assertIn(latest, steps)
                # Resume to the end at another world size: the uninterrupted run's losses.
                _, output = self.train(3, "kill_" + mode, *sets)
                self.assertIn("resumed from", output)
                losses = step_losses(run_dir)
                for step in range(latest + 1, KILL_STEPS + 1):
                    self.assertAlmostEqual(losses[step], reference[step], delta=1e-5 * reference[step],
                                           msg="step %d" % step)

    def test_corrupted_newest_step_falls_back_loudly(self):
        run_dir = os.path.join(self.tmp, "corrupt")
        self.train(2, "corrupt")
        newest = os.path.join(run_dir, "checkpoints", "step_%08d" % STEPS)
        shard = os.path.join(newest, "rank_00001.h5")
        with open(shard, "r+b") as f:  # flip one byte well inside the data
            f.seek(os.path.getsize(shard) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0xFF]))
        self.assertEqual(verify(newest).returncode, 5)
        _, output = self.train(2, "corrupt", "training.max_steps=%d" % (STEPS + 2))
        self.assertIn("NOT USING", output)
        self.assertIn("resumed from %s" % os.path.join(run_dir, "checkpoints", "step_00000006"), output)

    def test_async_and_sync_saves_are_identical(self):
        sync_dir = self.uninterrupted(2)
        async_dir, _ = self.train(2, "async", "checkpoint.async=true")
        import h5py  # the step's tensors, reassembled from both checkpoints
        for step in (6, STEPS):
            step_name = "step_%08d" % step
            for rank in (0, 1):
                a = h5py.File(os.path.join(sync_dir, "checkpoints", step_name, "rank_%05d.h5" % rank), "r")
                b = h5py.File(os.path.join(async_dir, "checkpoints", step_name, "rank_%05d.h5" % rank), "r")
                names = []
                a.visit(lambda n: names.append(n) if isinstance(a[n], h5py.Dataset) else None)
                self.assertTrue(names)
                for name in names:
                    self.assertEqual(a[name][()].tobytes(), b[name][()].tobytes(), "%s %s" % (step_name, name))

    def test_full_disk_keeps_training_or_fails_when_asked(self):
        if os.geteuid() != 0:
            self.skipTest("mounting a small tmpfs needs root")
        checkpoints = os.path.join(self.tmp, "full_disk_checkpoints")
        os.makedirs(checkpoints)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2000k", "tmpfs", checkpoints]).returncode != 0:
            self.skipTest("this machine does not allow mounting a tmpfs")
        self.addCleanup(subprocess.run, ["umount", "-l", checkpoints])
        # One step is ~1.5 MiB: the first save fits, later ones do not. Periodic
        # saves that fail let training go on; the final one is the work: exit 5.
        run_dir, output = self.train(2, "full_disk", "checkpoint.dir=" + checkpoints, "checkpoint.interval_steps=2",
                                     "checkpoint.keep_last=1", expect=5)
        self.assertIn("failed, nothing was committed", output)
        self.assertIn("the final save of step %d failed" % STEPS, output)
        self.assertIn("the last committed step is 2", output)
        self.assertEqual(sorted(step_losses(run_dir)), list(range(1, STEPS + 1)))  # training went on
        self.assertEqual(committed_steps(checkpoints), [2])
        self.assertEqual(verify(os.path.join(checkpoints, "step_00000002")).returncode, 0)
        self.assertEqual([n for n in os.listdir(checkpoints) if n.endswith(".tmp")], [])
        # checkpoint.fail_on_error stops at the first failed periodic save (step 4).
        remove(os.path.join(checkpoints, "step_00000002"))
        strict_dir, output = self.train(2, "full_disk_strict", "checkpoint.dir=" + checkpoints,
                                        "checkpoint.interval_steps=2", "checkpoint.fail_on_error=true", expect=5)
        self.assertIn("saving step 4 failed", output)
        self.assertEqual(max(step_losses(strict_dir)), 4)
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)

    def test_lora_checkpoint_refuses_another_base(self):
        lora = ["training.lora.enabled=true", "training.lora.rank=4"]
        run_dir, _ = self.train(2, "lora", *lora)
        _, output = self.train(2, "lora", *lora, "run.seed=99", "training.max_steps=%d" % (STEPS + 2), expect=5)
        self.assertIn("was trained on base model", output)

    def test_another_model_shape_is_refused_naming_the_difference(self):
        step = os.path.join(self.uninterrupted(2), "checkpoints", "step_%08d" % STEPS)
        _, output = self.train(2, "wider", "checkpoint.resume=" + step, "model.intermediate_size=192",
                               expect=5)
        self.assertIn("model.intermediate_size: checkpoint 176, this run 192", output)
        self.assertIn("start fresh in another checkpoint.dir", output)
        self.assertNotIn("repair or remove", output)
        self.assertNotIn("NOT USING", output)
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)
        # Another family with the same tensors (Mistral's, no layer sliding) is another model too.
        _, output = self.train(2, "family", "checkpoint.resume=" + step, "model.family=mistral", expect=5)
        self.assertIn('model.family: checkpoint "llama", this run "mistral"', output)
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)

    def test_eval_scores_a_step_like_its_consolidated_directory(self):
        step = os.path.join(self.uninterrupted(2), "checkpoints", "step_%08d" % STEPS)
        hf = os.path.join(self.tmp, "hf")
        proc = subprocess.run([binary("nss_consolidate"), step, "--output", hf, "--format", "hf"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        scores = []
        for model in (step, hf):
            proc = subprocess.run([binary("nss_eval"), "--model", model, "--data", self.data, "--seq-len", "64"],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            scores.append(json.loads(proc.stdout))
        self.assertEqual(scores[0], scores[1])
        self.assertLess(scores[0]["loss"], 5.0)  # trained, not the initial ~5.55


if __name__ == "__main__":
    unittest.main()
