"""The preflight through the real binary under mpirun -n 4: every problem it
finds ends every rank with the same exit code (2 layout, 3 resources, 4 data)
in seconds, with the finding and a remediation; a rank 0 that never answers
does not leave the others hanging."""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, binary, mpirun, scratch, remove, write_token_dataset  # noqa: E402

NSS = binary("nss_hpc")
RUN_YAML = os.path.join(SOURCE, "configs", "run.yaml")
RANKS = 4


class PreflightTest(unittest.TestCase):
    def setUp(self):
        self.tmp = scratch("preflight")
        self.run_dir = os.path.join(self.tmp, "run")
        self.data = write_token_dataset(os.path.join(self.tmp, "train.h5"))

    def tearDown(self):
        remove(self.tmp)

    def run_nss(self, *sets, program=NSS, env=None, preflight_only=True):
        args = [program, RUN_YAML, "--set", "run.output_dir=" + self.run_dir]
        if not any(s.startswith("data.path=") for s in sets):
            args += ["--set", "data.path=" + self.data]
        if not any(s.startswith("eval.path=") for s in sets):
            args += ["--set", "eval.path=" + self.data]
        for s in sets:
            args += ["--set", s]
        if preflight_only and program == NSS:
            args.append("--preflight-only")
        start = time.monotonic()
        proc = mpirun(RANKS, args, timeout=180, env=env)
        return proc, time.monotonic() - start, proc.stdout + proc.stderr

    def report(self):
        with open(os.path.join(self.run_dir, "preflight.json")) as f:
            return json.load(f)

    def rank_log(self, rank):
        with open(os.path.join(self.run_dir, "logs", "rank_%05d.log" % rank)) as f:
            return f.read()

    def check(self, report, check_id):
        matches = [c for c in report["checks"] if c["id"] == check_id]
        self.assertEqual(len(matches), 1, report["checks"])
        return matches[0]

    def expect_no_go(self, proc, output, code, check_id):
        self.assertEqual(proc.returncode, code, output)
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)
        self.assertIn("no-go: [%s]" % check_id, output)
        report = self.report()
        self.assertEqual(report["verdict"], "no-go")
        self.assertEqual(report["exit_code"], code)
        failing = self.check(report, check_id)
        self.assertEqual(failing["status"], "fail")
        self.assertEqual(failing["code"], code)
        self.assertTrue(failing["remediation"], failing)
        # Every rank learned the same verdict before leaving.
        for rank in range(RANKS):
            self.assertIn("[preflight] no-go: [%s]" % check_id, self.rank_log(rank))
        return report

    def test_go_writes_the_report_and_every_rank_hears_it(self):
        proc, _, output = self.run_nss()
        self.assertEqual(proc.returncode, 0, output)
        report = self.report()
        self.assertEqual(report["schema_version"], 1)
        self.assertEqual(report["verdict"], "go")
        self.assertEqual(report["world_size"], RANKS)
        self.assertEqual([r["rank"] for r in report["ranks"]], list(range(RANKS)))
        ids = [c["id"] for c in report["checks"]]
        self.assertEqual(ids, ["layout.batch", "layout.devices", "layout.dtype", "data.open",
                               "eval.open", "data.format", "data.vocabulary", "eval.format",
                               "eval.vocabulary", "checkpoint.directory", "checkpoint.space",
                               "checkpoint.resume", "dataloader.host_memory", "model.pretrained",
                               "data.first_batch",
                               "memory.model", "model.parameters", "memory.synthetic_step",
                               "memory.budget", "privacy.budget", "layout.parallel"])
        for c in report["checks"]:
            if c["id"] != "privacy.budget":
                self.assertIn(c["status"], ("pass", "warn"), c)
        privacy = self.check(report, "privacy.budget")
        self.assertEqual((privacy["status"], privacy["message"]),
                         ("skipped", "privacy.enabled is false"))
        self.assertIsNone(report["privacy"])
        # One host: the layout advice only notes it (tests/preflight/
        # parallel_layout_advice_test.cpp covers several nodes).
        parallel = self.check(report, "layout.parallel")
        self.assertEqual(parallel["status"], "pass")
        self.assertIn("full sharding (G=4) on one node", parallel["message"])
        self.assertEqual((report["parallel"]["nodes"], report["parallel"]["shard_group_size"],
                          report["parallel"]["replica_groups"]), (1, 4, 1))
        self.assertIsNone(report["parallel"]["step_s"])
        self.assertGreater(report["dataloader"]["available_bytes"], 0)
        self.assertGreater(report["dataloader"]["first_batch_s"], 0)
        # The tiny preset: 125504 parameters, all trainable.
        self.assertEqual(report["model"], {"parameters": 125504, "trainable_parameters": 125504})
        memory = report["memory"]
        self.assertEqual(memory["device"], "cpu")
        # Two synthetic measurements (micro-batch 1 and the configured 2), both predicted
        # by the analytic model to within 10%.
        self.assertEqual([m["micro_batch_size"] for m in memory["measurements"]], [1, 2])
        synthetic = self.check(report, "memory.synthetic_step")
        self.assertLess(abs(synthetic["predicted"] / synthetic["measured"] - 1), 0.1, synthetic)
        self.assertEqual(sum(c for c in memory["components"].values()),
                         memory["predicted_peak_bytes"])
        self.assertLessEqual(memory["measured_peak_bytes"], memory["budget_bytes"])
        self.assertEqual(memory["max_micro_batch_size"], 2)  # the largest divisor of 8 / 4 ranks
        self.assertLess(report["duration_s"], 10)
        self.assertIn("verdict: go", output)
        for rank in range(RANKS):
            self.assertIn("[preflight] go:", self.rank_log(rank))

    def test_missing_dataset_is_exit_4_on_every_rank(self):
        proc, _, output = self.run_nss("data.path=" + os.path.join(self.tmp, "missing.h5"))
        self.expect_no_go(proc, output, 4, "data.open")
        self.assertIn("missing.h5 does not exist (and on 3 more ranks)", output)
        self.assertIn("hint: check data.path", output)

    def test_fifo_dataset_fails_in_seconds(self):
        fifo = os.path.join(self.tmp, "fifo.h5")
        os.mkfifo(fifo)
        proc, seconds, output = self.run_nss("data.path=" + fifo,
                                             "preflight.first_batch_timeout_s=5")
        self.expect_no_go(proc, output, 4, "data.open")
        self.assertIn("is a FIFO (named pipe), not a file", output)
        self.assertLess(seconds, 30, output)

    def test_file_that_is_not_hdf5_is_exit_4(self):
        text = os.path.join(self.tmp, "notes.txt")
        with open(text, "w") as f:
            f.write("plain text, not tokens\n")
        proc, _, output = self.run_nss("data.path=" + text)
        self.expect_no_go(proc, output, 4, "data.format")
        self.assertIn("is not an HDF5 file", output)

    def test_bad_batch_arithmetic_is_exit_2(self):
        proc, _, output = self.run_nss("training.global_batch_size=6",
                                       "training.micro_batch_size=2")
        self.expect_no_go(proc, output, 2, "layout.batch")
        self.assertIn("2 x 4 = 8", output)
        self.assertIn("set global_batch_size to 8", output)

    def test_dataloader_beyond_the_memory_limit_is_exit_3(self):
        # Slurm says 1 GiB per node; 4 ranks x 64 x 1000 x 2 x ((129 + 1) x 8 + 128) B x 2 = 1.20 GB.
        proc, _, output = self.run_nss("data.num_workers=64", "data.prefetch_factor=1000",
                                       env={"SLURM_MEM_PER_NODE": "1024"})
        report = self.expect_no_go(proc, output, 3, "dataloader.host_memory")
        self.assertIn("bound by SLURM_MEM_PER_NODE", output)
        self.assertIn("hint: keep data.num_workers x data.prefetch_factor <=", output)
        self.assertEqual(report["dataloader"]["available_bytes"], 1 << 30)
        self.assertEqual(report["dataloader"]["estimated_bytes"], 4 * 64 * 1000 * 2 * (130 * 8 + 128) * 2)

    def test_tokens_beyond_the_vocabulary_is_exit_4(self):
        # The dataset's ids go up to 257; a 200-token vocabulary cannot embed them.
        proc, _, output = self.run_nss("model.vocab_size=200")
        self.expect_no_go(proc, output, 4, "data.vocabulary")
        self.assertIn("257", output)
        self.assertIn("model.vocab_size", output)

    def test_impossible_memory_budget_is_exit_3_with_a_micro_batch_that_fits(self):
        # Long sequences make the activations dominate: micro-batch 8 needs about
        # twice the tensors of micro-batch 4. A first run measures both; Slurm's
        # node limit is then set so the budget falls halfway between them.
        data = write_token_dataset(os.path.join(self.tmp, "long.h5"), tokens=70000)
        sets = ("data.path=" + data, "eval.path=" + data, "data.seq_len=512",
                "training.global_batch_size=32", "training.micro_batch_size=8")
        proc, _, output = self.run_nss(*sets)
        self.assertEqual(proc.returncode, 0, output)
        memory = self.report()["memory"]
        peaks = {m["micro_batch_size"]: m["tensor_peak_bytes"] for m in memory["measurements"]}
        self.assertEqual(sorted(peaks), [4, 8])
        extras = memory["measured_peak_bytes"] - peaks[8]
        budget = extras + (peaks[4] + peaks[8]) // 2
        node_mib = int(budget / 0.9 * RANKS) >> 20

        proc, seconds, output = self.run_nss(*sets, env={"SLURM_MEM_PER_NODE": str(node_mib)})
        report = self.expect_no_go(proc, output, 3, "memory.synthetic_step")
        self.assertIn("ran out of memory", output)
        self.assertIn("hint: set training.micro_batch_size=4", output)
        self.assertEqual(report["memory"]["max_micro_batch_size"], 4)
        budget_check = self.check(report, "memory.budget")
        self.assertEqual(budget_check["status"], "fail")
        self.assertIn("set training.micro_batch_size=4", budget_check["remediation"])
        for rank in range(RANKS):
            self.assertIn("hint: set training.micro_batch_size=4", self.rank_log(rank))
        self.assertLess(seconds, 60, output)

    def test_rank_0_stuck_before_the_verdict_others_leave(self):
        proc, seconds, output = self.run_nss("preflight.verdict_timeout_s=5",
                                             program=binary("preflight_stall_probe"))
        self.assertEqual(proc.returncode, 3, output)
        self.assertIn("rank 0 did not deliver the preflight verdict within "
                      "preflight.verdict_timeout_s = 5 s; its log is %s/logs/rank_00000.log"
                      % self.run_dir, output)
        self.assertLess(seconds, 60, output)
        self.assertEqual(self.report()["verdict"], "go")  # rank 0 decided, then stalled

    def test_disabled_preflight_is_skipped_and_logged(self):
        proc, _, output = self.run_nss("preflight.enabled=false",
                                       "data.path=" + os.path.join(self.tmp, "missing.h5"))
        self.assertEqual(proc.returncode, 0, output)
        self.assertIn("[preflight] skipped: preflight.enabled is false", output)
        self.assertFalse(os.path.exists(os.path.join(self.run_dir, "preflight.json")))

    def test_disabled_preflight_still_checks_batch_arithmetic(self):
        proc, _, output = self.run_nss("preflight.enabled=false", "training.global_batch_size=6")
        self.assertEqual(proc.returncode, 2, output)
        self.assertIn("2 x 4 = 8", output)

    def test_abandoned_thread_does_not_hold_up_the_exit(self):
        start = time.monotonic()
        proc = mpirun(2, [binary("abandoned_thread_probe")], timeout=60)
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertLess(time.monotonic() - start, 30)


if __name__ == "__main__":
    unittest.main()
