"""No run ends with 0, 7 or 75 unless the checkpoint it promises is committed
and verifies (docs/operations.md, "Guarantees"), through the real nss_hpc at 2
ranks, each case asserting the exit code of every rank, the message and what
is on disk afterwards:

- a final save or a stop save (SIGUSR1, SIGUSR2) that fails is exit 5, and the
  preflight refuses a checkpoint.dir that cannot be written (exit 5);
- a corrupt newest step is set aside as step_N.corrupt-<time> and saved again,
  `latest` names a step that verifies; a step that could not be read (a lock
  another process holds: maybe transient) is never set aside;
- a checkpoint directory has one owner: a second live job gets exit 2, another
  run's steps are refused by checkpoint.resume: auto (exit 5) and accepted,
  with a warning, when named explicitly;
- metrics.jsonl and rank logs on a full disk (/dev/full) or at a file-size
  limit (RLIMIT_FSIZE) do not stop training, and metrics lines are never torn;
- a changed model shape names what differs without advising to delete steps; a
  metadata.json whose step differs from its directory is damage; a data
  position beyond the dataset is exit 4.
Needs no mount and never skips: a regular file where a directory belongs,
/dev/full and RLIMIT_FSIZE work for root too."""
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import (MPIEXEC, SOURCE, ScratchDirTest, binary, kill_session, prepare_text_dataset,  # noqa: E402
                     session_members, short_run_args)

CONFIG = os.path.join(SOURCE, "configs", "run.yaml")
STEPS = 12

# Runs one rank and records its exit code, so a test sees every rank's code
# (mpiexec reports only one). NSS_TEST_FILE_BLOCKS limits the rank's file
# sizes (512-byte blocks, SIGXFSZ ignored) but not mpiexec's own files.
RANK_WRAPPER = ('rc_dir="$1"; shift; '
                'if [ -n "$NSS_TEST_FILE_BLOCKS" ]; then ulimit -f "$NSS_TEST_FILE_BLOCKS"; trap "" XFSZ; fi; '
                '"$@"; rc=$?; echo $rc > "$rc_dir/rank_${OMPI_COMM_WORLD_RANK}"; exit $rc')


def committed_steps(checkpoints):
    if not os.path.isdir(checkpoints):
        return []
    return sorted(int(n[5:]) for n in os.listdir(checkpoints) if n[5:].isdigit() and n.startswith("step_"))


def verify(path):
    return subprocess.run([binary("nss_ckpt"), "verify", path], capture_output=True, text=True, timeout=120)


def flip_byte(path):
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))


def metrics_steps(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return [json.loads(line)["step"] for line in f if '"loss"' in line and '"event"' not in line]


class RunGuaranteesTest(ScratchDirTest):
    SCRATCH_TAG = "guarantees"

    @classmethod
    def setUpClass(cls):
        cls.shared = os.path.join("/tmp", "nss_guarantees_data_%d" % os.getpid())
        os.makedirs(cls.shared, exist_ok=True)
        cls.data = prepare_text_dataset(cls.shared)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.shared])

    def args(self, run_dir, *sets):
        return short_run_args(CONFIG, run_dir, self.data, STEPS, 32, 4, sets)

    def launch(self, run_dir, *sets, ranks=2, file_limit=None, flags=()):
        """Starts the job in its own session; returns (Popen, rc_dir).
        `file_limit`: the largest file a rank may write, in bytes."""
        rc_dir = os.path.join(self.dir, "rc_%d" % time.monotonic_ns())
        os.makedirs(rc_dir)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        if file_limit:
            env["NSS_TEST_FILE_BLOCKS"] = str(file_limit // 512)
        command = [MPIEXEC, "-n", str(ranks), "--oversubscribe", "sh", "-c", RANK_WRAPPER, "sh", rc_dir]
        proc = subprocess.Popen(command + self.args(run_dir, *sets) + list(flags), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
        return proc, rc_dir

    def finish(self, proc, rc_dir, ranks=2, timeout=300):
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_session(proc.pid)
            raise AssertionError("the job did not end within %d s" % timeout)
        codes = {}
        for rank in range(ranks):
            path = os.path.join(rc_dir, "rank_%d" % rank)
            codes[rank] = int(open(path).read()) if os.path.exists(path) else None
        return codes, output

    def run_job(self, name, *sets, expect=0, file_limit=None):
        run_dir = self.path(name)
        codes, output = self.finish(*self.launch(run_dir, *sets, file_limit=file_limit))
        self.assertEqual(codes, {0: expect, 1: expect}, output)
        return run_dir, output

    def rank_pids(self, proc):
        """The nss_hpc ranks of a launched job."""
        pids = []
        for pid in session_members(proc.pid):
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"nss_hpc"):
                pids.append(pid)
        return pids

    def wait_for_step(self, run_dir, step, proc, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if metrics_steps(run_dir) and max(metrics_steps(run_dir)) >= step:
                    return
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        raise AssertionError("the job did not reach step %d" % step)

    def rank_log(self, run_dir, rank):
        with open(os.path.join(run_dir, "logs", "rank_%05d.log" % rank)) as f:
            return f.read()

    # --- 1. failed final and stop saves -------------------------------------------------

    def test_checkpoint_dir_that_cannot_be_written_is_a_preflight_no_go(self):
        blocker = self.write("a_file", b"not a directory")
        start = time.monotonic()
        run_dir, output = self.run_job("blocked", "checkpoint.dir=" + blocker + "/checkpoints", expect=5)
        self.assertLess(time.monotonic() - start, 60)
        self.assertIn("cannot create the checkpoint directory " + blocker + "/checkpoints", output)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "metrics.jsonl")))

    def test_final_save_that_fails_is_exit_5_whatever_fail_on_error_says(self):
        # The file appears after the lock and the preflight: only the saves meet it.
        checkpoints = self.path("late_file")
        proc, rc_dir = self.launch(self.path("final"), "checkpoint.dir=" + checkpoints,
                                   "training.max_steps=1000", "checkpoint.interval_steps=0")
        self.wait_for_step(self.path("final"), 2, proc)
        subprocess.run(["rm", "-rf", checkpoints])
        self.write("late_file", b"a regular file where checkpoint.dir belongs")
        codes, output = self.finish(proc, rc_dir)
        self.assertEqual(codes, {0: 5, 1: 5}, output)
        self.assertIn("the final save of step 1000 failed", output)
        self.assertIn("no step of this run is committed", output)
        self.assertEqual(max(metrics_steps(self.path("final"))), 1000)

    def stop_with_failing_save(self, signum, name):
        """A job whose files cannot grow past 200 KiB (a rank file is ~500 KiB):
        the preflight's probe and the logs fit, every save fails."""
        run_dir = self.path(name)
        proc, rc_dir = self.launch(run_dir, "training.max_steps=100000", "checkpoint.interval_steps=0",
                                   file_limit=200 << 10)
        self.wait_for_step(run_dir, 3, proc)
        for pid in self.rank_pids(proc):  # as srun delivers it: to every rank
            os.kill(pid, signum)
        codes, output = self.finish(proc, rc_dir)
        self.assertEqual(codes, {0: 5, 1: 5}, output)
        self.assertIn("the save on the stop signal of step", output)
        self.assertEqual(committed_steps(os.path.join(run_dir, "checkpoints")), [])
        for rank in (0, 1):
            self.assertIn("failed, nothing was committed", self.rank_log(run_dir, rank))

    def test_sigusr1_stop_whose_save_fails_is_exit_5_not_75(self):
        self.stop_with_failing_save(signal.SIGUSR1, "usr1")

    def test_sigusr2_stop_whose_save_fails_is_exit_5_not_7(self):
        self.stop_with_failing_save(signal.SIGUSR2, "usr2")

    # --- 11. --preflight-only checks everything the run will read -------------------------

    def test_preflight_only_refuses_what_the_run_could_not_read(self):
        run_dir, _ = self.run_job("source")
        checkpoints = os.path.join(run_dir, "checkpoints")
        os.rename(os.path.join(checkpoints, "step_%08d" % STEPS), os.path.join(checkpoints, "step_%08d.tmp" % STEPS))
        cases = [
            (("checkpoint.resume=" + self.path("nowhere"),), 5, "checkpoint.resume: %s does not exist" % self.path("nowhere")),
            (("checkpoint.resume=" + os.path.join(checkpoints, "step_%08d.tmp" % STEPS),), 5, "was never committed"),
            (("checkpoint.dir=" + checkpoints, "checkpoint.resume=never"), 5, "checkpoint.resume is never, but"),
            (("model.from_pretrained=meta-llama/Llama-3.2-1B",), 4, "meta-llama/Llama-3.2-1B"),
            (("model.from_pretrained=" + self.path("no_model"),), 4, self.path("no_model")),
        ]
        for sets, code, message in cases:
            with self.subTest(sets=sets):
                name = "probe_%d" % time.monotonic_ns()
                start = time.monotonic()
                proc, rc_dir = self.launch(self.path(name), *sets, flags=["--preflight-only"])
                codes, output = self.finish(proc, rc_dir)
                self.assertEqual(codes, {0: code, 1: code}, output)
                self.assertIn(message, output)
                self.assertLess(time.monotonic() - start, 60)
                self.assertFalse(os.path.exists(os.path.join(self.path(name), "metrics.jsonl")))

    # --- 2. a corrupt newest step --------------------------------------------------------

    def test_corrupt_newest_step_is_set_aside_and_saved_again(self):
        run_dir, _ = self.run_job("corrupt", "checkpoint.keep_last=2")
        checkpoints = os.path.join(run_dir, "checkpoints")
        flip_byte(os.path.join(checkpoints, "step_%08d" % STEPS, "rank_00001.h5"))
        _, output = self.run_job("corrupt", "checkpoint.keep_last=2", "training.max_steps=%d" % (STEPS + 6))
        self.assertIn("NOT USING", output)
        self.assertIn("set aside step %d as" % STEPS, output)
        aside = [n for n in os.listdir(checkpoints) if n.startswith("step_%08d.corrupt-" % STEPS)]
        self.assertEqual(len(aside), 1, os.listdir(checkpoints))
        self.assertEqual(verify(os.path.join(checkpoints, aside[0])).returncode, 5)  # kept as found
        # Saved again, and keep_last counts only committed steps.
        self.assertEqual(committed_steps(checkpoints), [STEPS, STEPS + 6])
        with open(os.path.join(checkpoints, "latest")) as f:
            latest = f.read().strip()
        self.assertEqual(latest, "step_%08d" % (STEPS + 6))
        self.assertEqual(verify(os.path.join(checkpoints, latest)).returncode, 0)
        self.assertEqual(verify(os.path.join(checkpoints, "step_%08d" % STEPS)).returncode, 0)

    def test_unreadable_step_is_skipped_but_never_set_aside(self):
        run_dir, _ = self.run_job("locked")
        checkpoints = os.path.join(run_dir, "checkpoints")
        newest = os.path.join(checkpoints, "step_%08d" % STEPS, "rank_00001.h5")
        with open(newest, "rb") as held:  # another process's HDF5 lock: a read that may succeed later
            fcntl.flock(held, fcntl.LOCK_EX)
            _, output = self.run_job("locked", "training.max_steps=%d" % (STEPS + 2))
        self.assertIn("NOT USING", output)
        self.assertNotIn("set aside", output)
        self.assertFalse([n for n in os.listdir(checkpoints) if ".corrupt-" in n])
        self.assertEqual(verify(os.path.join(checkpoints, "step_%08d" % STEPS)).returncode, 0)
        self.assertEqual(verify(os.path.join(checkpoints, "step_%08d" % (STEPS + 2))).returncode, 0)

    def test_step_whose_metadata_names_another_step_is_damaged(self):
        run_dir, _ = self.run_job("renamed")
        index = os.path.join(run_dir, "checkpoints", "step_%08d" % STEPS, "metadata.json")
        with open(index) as f:
            doc = json.load(f)
        doc["step"] = STEPS - 1
        with open(index, "w") as f:
            json.dump(doc, f)
        _, output = self.run_job("renamed", "training.max_steps=%d" % (STEPS + 2))
        self.assertIn("records step %d, but its directory is named for step %d" % (STEPS - 1, STEPS), output)
        self.assertIn("resumed from %s" % os.path.join(run_dir, "checkpoints", "step_00000006"), output)
        self.assertIn("set aside step %d" % STEPS, output)

    # --- 3. one owner per checkpoint directory ---------------------------------------------

    def test_checkpoint_directory_has_one_owner(self):
        first = self.path("first")
        checkpoints = os.path.join(first, "checkpoints")
        proc, rc_dir = self.launch(first, "training.max_steps=100000", "checkpoint.interval_steps=50")
        self.wait_for_step(first, 2, proc)
        start = time.monotonic()
        _, output = self.run_job("second", "checkpoint.dir=" + checkpoints, expect=2)
        self.assertLess(time.monotonic() - start, 60)
        self.assertIn("checkpoint directory %s is in use by a live job (host=" % checkpoints, output)
        self.assertIn("pid=", output)
        for pid in self.rank_pids(proc):
            os.kill(pid, signal.SIGUSR1)
        codes, output = self.finish(proc, rc_dir)
        self.assertEqual(codes, {0: 75, 1: 75}, output)
        saved = committed_steps(checkpoints)
        self.assertTrue(saved)
        # Another run may not continue those steps by itself...
        _, output = self.run_job("second", "checkpoint.dir=" + checkpoints, expect=5)
        self.assertIn("holds the steps of another run", output)
        self.assertIn("give this run its own checkpoint.dir", output)
        self.assertEqual(committed_steps(checkpoints), saved)  # nothing of the second run
        # ...but may start from one on purpose, in its own checkpoint.dir.
        step = os.path.join(checkpoints, "step_%08d" % saved[-1])
        run_dir, output = self.run_job("third", "checkpoint.resume=" + step, "checkpoint.interval_steps=0",
                                       "training.max_steps=%d" % (saved[-1] + 2))
        self.assertIn("was saved by another run", output)
        self.assertEqual(committed_steps(os.path.join(run_dir, "checkpoints")), [saved[-1] + 2])
        # A fresh start may not write among committed steps.
        _, output = self.run_job("fourth", "checkpoint.dir=" + checkpoints, "checkpoint.resume=never", expect=5)
        self.assertIn("checkpoint.resume is never, but", output)

    # --- 4. metrics and logs on a full disk ------------------------------------------------

    def test_metrics_and_a_rank_log_on_a_full_disk_do_not_stop_training(self):
        run_dir = self.path("full")
        os.makedirs(os.path.join(run_dir, "logs"))
        os.symlink("/dev/full", os.path.join(run_dir, "metrics.jsonl"))
        os.symlink("/dev/full", os.path.join(run_dir, "logs", "rank_00001.log"))
        _, output = self.run_job("full")
        self.assertEqual(output.count("cannot write %s/metrics.jsonl: No space left on device" % run_dir), 1, output)
        self.assertIn("cannot write a log file", output)
        checkpoints = os.path.join(run_dir, "checkpoints")
        self.assertEqual(committed_steps(checkpoints), [6, STEPS])
        self.assertEqual(verify(os.path.join(checkpoints, "step_%08d" % STEPS)).returncode, 0)

    def test_metrics_at_a_file_size_limit_keep_whole_lines(self):
        run_dir = self.path("limit")
        os.makedirs(run_dir)
        limit = 2 << 20  # above a rank file (~500 KiB), so only the metrics meet it
        with open(os.path.join(run_dir, "metrics.jsonl"), "w") as f:
            line = json.dumps({"event": "padding", "text": "x" * 1000}) + "\n"
            while f.tell() + len(line) < limit - 3000:
                f.write(line)
            f.write('{"event": "torn by a kil')  # a killed job's last line
        _, output = self.run_job("limit", file_limit=limit)
        self.assertIn("ended in a torn line", output)
        self.assertIn("cannot write %s/metrics.jsonl" % run_dir, output)
        with open(os.path.join(run_dir, "metrics.jsonl")) as f:
            text = f.read()
        self.assertTrue(text.endswith("\n"))
        for line in text.splitlines():
            json.loads(line)  # every line whole
        self.assertTrue(metrics_steps(run_dir), "some step lines fit before the limit")
        self.assertEqual(verify(os.path.join(run_dir, "checkpoints", "step_%08d" % STEPS)).returncode, 0)

    # --- 13, 14. changed configuration and data ------------------------------------------------

    def test_another_adapter_setting_names_the_difference(self):
        lora = ("training.lora.enabled=true", "training.lora.rank=4")
        self.run_job("lora", *lora)
        _, output = self.run_job("lora", "training.lora.enabled=true", "training.lora.rank=8",
                                 "training.max_steps=%d" % (STEPS + 2), expect=5)
        self.assertIn("training.lora.rank: checkpoint 4, this run 8", output)
        self.assertIn("the steps themselves are intact", output)
        self.assertNotIn("NOT USING", output)
        self.assertNotIn("repair or remove", output)

    def test_data_position_beyond_the_dataset_is_a_data_error(self):
        import h5py
        import numpy as np
        data = os.path.join(self.dir, "long.h5")
        def write_tokens(count):
            with h5py.File(self.data, "r") as src, h5py.File(data, "w") as dst:
                tokens = src["tokens"][:count]
                dst.create_dataset("tokens", data=tokens)
                for key in ("tokenizer", "vocab_size"):
                    dst.attrs[key] = src.attrs[key]
                dst.attrs["max_token_id"] = np.int64(tokens.max())
                dst.attrs["documents"] = np.int64(1)

        write_tokens(None)
        run_dir, _ = self.run_job("shrunk", "data.path=" + data, "training.global_batch_size=32",
                                  "training.micro_batch_size=16")
        write_tokens(33 * 40)  # the same path, much shorter
        _, output = self.run_job("shrunk", "data.path=" + data, "training.global_batch_size=32",
                                 "training.micro_batch_size=16", "training.max_steps=%d" % (STEPS + 2),
                                 "preflight.enabled=false", expect=4)
        self.assertIn("lies beyond the", output)
        self.assertIn("not the dataset the step was trained on", output)


if __name__ == "__main__":
    unittest.main()
