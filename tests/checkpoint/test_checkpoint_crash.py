"""Crashes and full disks never leave a partial step that looks committed:
kill -9 of every rank at random moments of synchronous and asynchronous saves,
then every committed step verifies and the newest one loads at another world
size; a disk that fills up mid-save leaves no partial step, every rank reports
the error, and the run goes on."""
import os
import random
import subprocess
import time
import unittest

import ckpt_helpers as ck
import nss_e2e

# About 30 MiB per step, so that kills land inside writes, fsyncs and commits.
SHAPE = "4096,256,688,2,128"
TRIALS = 4


class CrashTest(unittest.TestCase):
    def crash_and_recover(self, async_save, seed):
        rng = random.Random(seed)
        root = nss_e2e.scratch("ckpt_crash")
        self.addCleanup(nss_e2e.remove, root)
        d = os.path.join(root, "checkpoints")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        args = [nss_e2e.MPIEXEC, "-n", "2", "--oversubscribe", nss_e2e.binary("ckpt_writer"),
                "save", "--dir", d, "--first", 1, "--count", 100000, "--keep-last", 2,
                "--shape", SHAPE] + (["--async"] if async_save else [])
        proc = subprocess.Popen([str(a) for a in args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while not os.path.exists(os.path.join(d, "latest")):
                self.assertIsNone(proc.poll(), "the writer ended before its first commit")
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 1.5))
        finally:
            nss_e2e.kill_session(proc.pid)
            proc.wait()

        steps = ck.committed_steps(d)
        self.assertTrue(steps)
        interrupted = any(n.endswith((".tmp", ".old")) for n in os.listdir(d))
        verify = ck.tool("nss_ckpt", "verify", d)
        self.assertEqual(verify.returncode, 0, verify.stdout)
        load = ck.writer(3, "load", "--dir", d, "--shape", SHAPE)
        self.assertEqual(load.returncode, 0, load.stdout + load.stderr)
        line = ck.load_line(load)
        self.assertEqual(line["step"], steps[0])
        self.assertEqual(line["rejected"], [])
        self.assertEqual(line["mismatches"], 0)
        # Training resumes and saves again: leftovers of the crash are cleared.
        again = ck.writer(2, "save", "--dir", d, "--first", steps[0] + 1, "--shape", SHAPE,
                          "--keep-last", 2)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)
        self.assertEqual(ck.committed_steps(d)[0], steps[0] + 1)
        self.assertEqual([n for n in os.listdir(d) if n.endswith((".tmp", ".old"))], [])
        return steps[0], interrupted

    def test_kill_9_during_synchronous_saves(self):
        newest = [self.crash_and_recover(False, seed) for seed in range(TRIALS)]
        print("\n(newest committed step, killed inside a save) at each kill (sync):", newest)

    def test_kill_9_during_asynchronous_saves(self):
        newest = [self.crash_and_recover(True, 100 + seed) for seed in range(TRIALS)]
        print("\n(newest committed step, killed inside a save) at each kill (async):", newest)


def mount_tmpfs(path, size):
    """Mounts a small tmpfs (needs root); False when this machine does not allow it."""
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % size, "tmpfs", path],
                          capture_output=True).returncode == 0


class DiskFullTest(unittest.TestCase):
    def test_full_disk_commits_nothing_partial_and_every_rank_reports_it(self):
        root = nss_e2e.scratch("ckpt_full")
        self.addCleanup(nss_e2e.remove, root)
        d = os.path.join(root, "checkpoints")
        os.makedirs(d)
        step_bytes = 30 << 20
        if mount_tmpfs(d, step_bytes * 3 // 2):
            self.addCleanup(subprocess.run, ["umount", "-l", d])
            limit, first_fits = [], True  # step 1 fits, step 2 runs out of space
        else:
            limit, first_fits = ["--fsize-limit", 4 << 20], False  # every rank file is too big
        proc = ck.writer(2, "save", "--dir", d, "--first", 1, "--count", 3, "--keep-last", 1,
                         "--shape", SHAPE, *limit)
        out = proc.stdout
        self.assertEqual(proc.returncode, 5, out + proc.stderr)
        for rank in (0, 1):
            for step in (2, 3):
                self.assertIn("rank %d: step %d not saved:" % (rank, step), out)
        self.assertTrue("No space left on device" in out or "File too large" in out, out)
        self.assertEqual(ck.committed_steps(d), [1] if first_fits else [])
        self.assertEqual([n for n in os.listdir(d) if n.endswith(".tmp")], [])
        if first_fits:
            self.assertEqual(ck.tool("nss_ckpt", "verify", d).returncode, 0)
            line = ck.load_line(ck.writer(1, "load", "--dir", d, "--shape", SHAPE))
            self.assertEqual((line["step"], line["mismatches"]), (1, 0))


if __name__ == "__main__":
    unittest.main()
