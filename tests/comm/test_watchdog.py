"""A rank that skips or changes a collective ends the job with exit 6 in
seconds, and the log names that rank, instead of hanging."""
import os
import subprocess
import time
import unittest

BIN = os.environ.get("NSS_BIN_DIR", "build/bin")
MPIEXEC = os.environ.get("NSS_MPIEXEC", "mpiexec")


def run_probe(mode, ranks=4):
    start = time.monotonic()
    proc = subprocess.run(
        [MPIEXEC, "-n", str(ranks), "--oversubscribe", os.path.join(BIN, "watchdog_probe"), mode],
        capture_output=True, text=True, timeout=90)
    return proc, time.monotonic() - start


class WatchdogTest(unittest.TestCase):
    def test_skipped_collective_names_the_rank_behind(self):
        proc, seconds = run_probe("skip")
        output = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 6, output)
        self.assertLess(seconds, 60, output)
        self.assertIn("rank 1 (host", output)
        self.assertIn("is behind: last finished all_reduce #3 (step 2)", output)
        self.assertIn("are waiting in all_reduce #4 (the collective rank 1 misses)", output)

    def test_diverging_collective_names_the_rank(self):
        proc, _ = run_probe("diverge")
        output = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 6, output)
        self.assertIn("diverged: it is in barrier #4", output)
        self.assertIn("rank 1 (host", output)

    def assert_stuck_in_group(self, mode, group, waiting_rank):
        """Rank 3 skipped a collective of `group`: exit 6 in seconds, the
        diagnosis names the group, the rank waiting there and rank 3."""
        proc, seconds = run_probe(mode)
        output = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 6, output)
        self.assertLess(seconds, 60, output)
        self.assertIn("all_reduce #4 %s has not finished" % group, output)
        self.assertIn("rank %d is waiting in all_reduce #4 (unit 3 backward) %s"
                      % (waiting_rank, group), output)
        self.assertIn("rank 3 (host", output)
        self.assertIn("is behind: last finished all_reduce #3 (unit 2 backward) %s" % group,
                      output)

    def test_collective_stuck_in_a_shard_group_names_the_group(self):
        self.assert_stuck_in_group("group", "in shard group 1 (ranks 2,3)", 2)

    def test_collective_stuck_in_a_replica_group_names_the_group(self):
        self.assert_stuck_in_group("replica", "in replica group of shard rank 1 (ranks 1,3)", 1)

if __name__ == "__main__":
    unittest.main()
