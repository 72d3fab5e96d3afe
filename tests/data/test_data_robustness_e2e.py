"""Token files that go bad under a job, or hide bad ids, through the real
nss_hpc at 2 ranks and nss_eval (docs/data.md, "Errors"): a file truncated
while the job reads it ends the job with exit 4 naming the file, not with
SIGBUS; a file replaced by rename does not disturb the job; a negative id in
int32 data and an id beyond a wrong max_token_id attribute end with exit 4
naming the file, the token offset, the id and the vocabulary size, with the
preflight on or off, and in nss_eval. No failed run leaves a checkpoint or a
result behind."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
from nss_e2e import (MPIEXEC, SOURCE, ScratchDirTest, binary, kill_session, mpirun,  # noqa: E402
                     prepare_text_dataset, remove, scratch, write_token_dataset)
from hf_files import llama_config, random_llama_weights, write_model_dir  # noqa: E402

NSS = binary("nss_hpc")
NSS_EVAL = binary("nss_eval")
CONFIG = os.path.join(SOURCE, "configs", "run.yaml")
SEQ_LEN, BATCH = 32, 4
BAD_AT = 100  # token offset of the bad id
VOCAB = 258  # the tiny preset's
CRASH = re.compile(r"Bus error|SIGBUS|signal 7|Signal: ", re.IGNORECASE)


def train_args(run_dir, data, steps, preflight=False):
    return [NSS, CONFIG, "--set", "run.output_dir=" + run_dir, "--set", "data.path=" + data,
            "--set", "eval.interval_steps=0", "--set", "data.seq_len=%d" % SEQ_LEN,
            "--set", "training.global_batch_size=%d" % BATCH, "--set", "training.micro_batch_size=1",
            "--set", "training.max_steps=%d" % steps, "--set", "training.warmup_steps=2",
            "--set", "logging.interval_steps=1", "--set", "checkpoint.interval_steps=100000",
            "--set", "preflight.enabled=%s" % ("true" if preflight else "false")]


def logged_steps(run_dir):
    try:
        with open(os.path.join(run_dir, "metrics.jsonl")) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    steps = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:  # a line being written
            continue
        if "step" in record and "event" not in record:
            steps.append(record["step"])
    return steps


def rank_logs(run_dir):
    logs = {}
    for rank in (0, 1):
        with open(os.path.join(run_dir, "logs", "rank_%05d.log" % rank)) as f:
            logs[rank] = f.read()
    return logs


def committed_steps(run_dir):
    checkpoints = os.path.join(run_dir, "checkpoints")
    if not os.path.isdir(checkpoints):
        return []
    return sorted(n for n in os.listdir(checkpoints) if n.startswith("step_") or n == "latest")


def copy_with_bad_id(source, path, dtype, bad_id, tokens=BATCH * SEQ_LEN * 2 + 1):
    """The first `tokens` tokens of `source` as `dtype`, token BAD_AT set to
    `bad_id`, with byte-level attributes whose max_token_id (257) hides it.
    Two global batches of windows: every epoch reads every token."""
    with h5py.File(source) as f:
        values = f["tokens"][:tokens].astype(dtype)
    values[BAD_AT] = bad_id
    with h5py.File(path, "w") as f:
        f.create_dataset("tokens", data=values)
        f.attrs["tokenizer"] = "byte-level"
        f.attrs["vocab_size"] = np.int64(VOCAB)
        f.attrs["max_token_id"] = np.int64(VOCAB - 1)
        f.attrs["documents"] = np.int64(1)
    return path


class DataRobustnessTest(ScratchDirTest):
    SCRATCH_TAG = "data_robustness"

    @classmethod
    def setUpClass(cls):
        cls.corpus_dir = scratch("robustness_corpus")
        cls.text = prepare_text_dataset(cls.corpus_dir)

    @classmethod
    def tearDownClass(cls):
        remove(cls.corpus_dir)

    def tearDown(self):
        job = getattr(self, "job", None)
        if job and job.poll() is None:  # a failed test: take its job down first
            kill_session(job.pid)
            job.wait()
        super().tearDown()

    def start_job(self, run_dir, data, steps):
        """nss_hpc at 2 ranks in its own session; output in run_dir.out."""
        self.output_path = run_dir + ".out"
        env = dict(os.environ, OMP_NUM_THREADS="1")
        with open(self.output_path, "w") as output:
            self.job = subprocess.Popen([MPIEXEC, "-n", "2", "--oversubscribe"] + train_args(run_dir, data, steps),
                                        stdout=output, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        return self.job

    def wait_for_first_step(self, proc, run_dir):
        deadline = time.monotonic() + 120
        while not logged_steps(run_dir):
            self.assertIsNone(proc.poll(), "the job ended before its first step:\n" + self.job_output())
            self.assertLess(time.monotonic(), deadline, "no step logged in 120 s")
            time.sleep(0.01)

    def finish(self, proc, timeout=120):
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_session(proc.pid)
            self.fail("the job did not end within %d s:\n%s" % (timeout, self.job_output()))

    def job_output(self):
        with open(self.output_path) as f:
            return f.read()

    def test_a_file_truncated_under_the_job_is_exit_4_naming_it(self):
        data = shutil.copy(self.text, self.path("train.h5"))
        run_dir = self.path("run")
        proc = self.start_job(run_dir, data, steps=100000)
        self.wait_for_first_step(proc, run_dir)
        os.truncate(data, 4096)  # the HDF5 header survives, the tokens do not
        self.assertEqual(self.finish(proc), 4, self.job_output())
        output = self.job_output()
        shrank = "[data] token dataset %s shrank under the running job" % data
        self.assertIn("nss_hpc: error: " + shrank, output)
        self.assertIn("rename it into place", output)
        self.assertNotRegex(output, CRASH)
        # The rank that read the lost page logs the error; the other is taken
        # down by MPI_Abort, possibly before it reads: neither logs anything else.
        logs = rank_logs(run_dir)
        self.assertTrue(any(shrank in log for log in logs.values()), logs)
        for rank, log in logs.items():
            self.assertNotRegex(log, CRASH, "rank %d" % rank)
            for line in log.splitlines():
                if "[error]" in line:
                    self.assertIn(shrank, line, "rank %d" % rank)
            self.assertNotIn("[train] finished", log)
        self.assertEqual(committed_steps(run_dir), [])
        self.assertLess(max(logged_steps(run_dir)), 100000)

    def test_a_file_replaced_by_rename_leaves_the_job_alone(self):
        data = shutil.copy(self.text, self.path("train.h5"))
        run_dir = self.path("run")
        steps = 600
        proc = self.start_job(run_dir, data, steps=steps)
        self.wait_for_first_step(proc, run_dir)
        # Too short for this job: a job that opened the new file would fail.
        replacement = write_token_dataset(self.path("train.h5.new"), tokens=100)
        os.replace(replacement, data)
        renamed_after = max(logged_steps(run_dir))
        self.assertIsNone(proc.poll())
        self.assertLess(renamed_after + 100, steps, "renamed too late to matter")
        self.assertEqual(self.finish(proc), 0, self.job_output())
        self.assertEqual(logged_steps(run_dir), list(range(1, steps + 1)))
        self.assertIn("step_%08d" % steps, committed_steps(run_dir))
        logs = rank_logs(run_dir)
        for rank, log in logs.items():
            self.assertNotIn("[error]", log, "rank %d" % rank)
        self.assertIn("[train] finished %d steps" % steps, logs[0])
        with h5py.File(data) as f:  # the new file is in place, untouched by the job
            self.assertEqual(f["tokens"].shape, (100,))

    def bad_files(self):
        """(file, id, what the message must say) for each hidden bad id."""
        negative = copy_with_bad_id(self.text, self.path("negative.h5"), np.int32, -5)
        beyond = copy_with_bad_id(self.text, self.path("beyond.h5"), np.uint16, 300)
        # The preflight's (and the trainer's) scan of signed data finds the
        # negative id; the wrong attribute hides 300 until a read hands it out.
        return [(negative, r"found id -5 at token %d, but ids must lie in \[0, model\.vocab_size = %d\)"
                 % (BAD_AT, VOCAB)),
                (beyond, r"holds id 300 at token %d of /tokens, outside the model's vocabulary "
                 r"\[0, %d\) \(vocab_size %d\); its max_token_id attribute says %d, which is wrong"
                 % (BAD_AT, VOCAB, VOCAB, VOCAB - 1))]

    def test_hidden_bad_ids_end_nss_hpc_with_exit_4_and_their_position(self):
        for data, expected in self.bad_files():
            for preflight in (True, False):
                with self.subTest(data=os.path.basename(data), preflight=preflight):
                    run_dir = self.path("run_%s_%s" % (os.path.basename(data), preflight))
                    proc = mpirun(2, train_args(run_dir, data, steps=20, preflight=preflight), timeout=300)
                    output = proc.stdout + proc.stderr
                    self.assertEqual(proc.returncode, 4, output)
                    self.assertRegex(output, r"nss_hpc: error: .*token dataset %s.* %s"
                                     % (re.escape(data), expected))
                    self.assertNotIn("Traceback", output)
                    self.assertNotIn("c10::", output)  # no libtorch index error
                    self.assertEqual(committed_steps(run_dir), [])
                    self.assertNotIn("[train] finished", output)

    def test_hidden_bad_ids_end_nss_eval_with_exit_4_and_their_position(self):
        model = self.path("model")
        config = llama_config(vocab=VOCAB)
        write_model_dir(model, config, random_llama_weights(config), "F32", 1)
        for data, expected in self.bad_files():
            with self.subTest(data=os.path.basename(data)):
                proc = subprocess.run([NSS_EVAL, "--model", model, "--data", data, "--seq-len", str(SEQ_LEN),
                                       "--batches", "2", "--batch-size", str(BATCH)],
                                      capture_output=True, text=True, timeout=120)
                self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
                self.assertRegex(proc.stderr, r"nss_eval: error: .*token dataset %s.* %s"
                                 % (re.escape(data), expected))
                self.assertNotIn("c10::", proc.stderr)
                self.assertEqual(proc.stdout.strip(), "", "no loss may be reported")


if __name__ == "__main__":
    unittest.main()
