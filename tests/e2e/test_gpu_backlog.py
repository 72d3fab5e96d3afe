"""scripts/bench/gpu_backlog.sh works before a device minute is spent on it:
its arguments, part selection, time caps, skips with reasons and summary
format (--dry-run, no GPU, no build, no package), and its commands and
reports for real on this machine's CPU build at the tiny shape (--rehearse):
the figures come from the runs' own files, a step past its cap is killed
with every rank, the parts after it are cut to what is left, and the part
that runs only when named compares two builds in interleaved pairs."""
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from nss_e2e import BIN, SOURCE, ScratchDirTest, binary  # noqa: E402

SCRIPT = os.path.join(SOURCE, "scripts", "bench", "gpu_backlog.sh")
PARTS = ["smoke", "tests", "async", "throughput", "adapters", "generate"]
ALL_RECOMPUTE = "none selective full"  # the throughput part's rows (default: what remains unmeasured)


def backlog(*args, env=None, timeout=300):
    full_env = dict(os.environ, NSS_BACKLOG_PYTHON=sys.executable, OMP_NUM_THREADS="1", **(env or {}))
    return subprocess.run(["bash", SCRIPT] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=full_env)


def verdicts(summary_text):
    return dict(re.findall(r"^\*\*(\w+): ([A-Z-]+)\*\*", summary_text, re.M))


class GpuBacklogTest(ScratchDirTest):
    SCRATCH_TAG = "gpu_backlog"

    def read(self, *parts):
        with open(os.path.join(self.dir, *parts)) as f:
            return f.read()

    def gpl_data(self):
        """A data directory whose train.h5 is the GPL's text."""
        data = self.path("data")
        os.mkdir(data)
        proc = subprocess.run([binary("nss_prepare_data"), "--format", "text", "--input",
                               "/usr/share/common-licenses/GPL-3", "--output", os.path.join(data, "train.h5")],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return data

    def test_the_dry_run_plans_every_part_within_the_budget(self):
        proc = backlog("--dry-run", self.path("out"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        summary = self.read("out", "summary.md")
        self.assertEqual(verdicts(summary), {p: "DRY-RUN" for p in PARTS})
        caps = [int(c) for c in re.findall(r"\(\d+ s of a (\d+) s cap\)", summary)]
        self.assertEqual(len(caps), len(PARTS))
        self.assertLessEqual(sum(caps), 570)  # one device command of 9.5 minutes
        plan = self.read("out", "plan.md")
        listed = backlog("--list-binaries").stdout.split()
        self.assertIn("nf4_cuda_test", listed)
        for name in listed:
            self.assertIn("bin/" + name, plan, "the package carries %s, so a part runs it" % name)
        for part in PARTS:  # each part says what its result decides
            self.assertRegex(summary, r"### %s\n\nDecides \w" % part)
        # The fused kernels alone: one row per recompute mode, and the shares grow.
        proc = backlog("--dry-run", self.path("fused"), "throughput",
                       env={"NSS_BACKLOG_FUSED": "1", "NSS_BACKLOG_RECOMPUTE": "none selective"})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        plan = self.read("fused", "plan.md")
        self.assertNotIn("NSS_FUSED_KERNELS=0", plan)
        self.assertEqual(len(re.findall(r"NSS_FUSED_KERNELS=1 .*activation_checkpointing=(none|selective)`", plan)), 2)

    def test_arguments_are_checked_with_a_message_naming_the_fix(self):
        cases = [
            (["--dry-run", self.path("o1"), "tests", "bogus"], "unknown part 'bogus'"),
            (["--dry-run", "--rehearse", self.path("o2")], "exclude each other"),
            (["--frobnicate", self.path("o4")], "unknown option --frobnicate"),
        ]
        for args, message in cases:
            with self.subTest(args=args[:2]):
                proc = backlog(*args)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn(message, proc.stderr)
        for variable, value in (("NSS_BACKLOG_BUDGET_S", "-5"), ("NSS_BACKLOG_1B_STEPS", "1e3"),
                                ("NSS_BACKLOG_CAPS", "async=ten"), ("NSS_BACKLOG_FUSED", "1 1")):
            with self.subTest(variable=variable):
                proc = backlog("--dry-run", self.path("o5"), env={variable: value})
                self.assertEqual(proc.returncode, 2)
                self.assertIn(variable, proc.stderr)
        # A missing package is the smoke part's failure, which skips the rest.
        proc = backlog("--rehearse", "--package", self.path("none"), self.path("o3"), "async")
        self.assertEqual(proc.returncode, 1)
        summary = self.read("o3", "summary.md")
        self.assertIn("no package at %s: run scripts/bench/gpu_package.sh" % self.path("none"), summary)
        self.assertEqual(verdicts(summary), {"smoke": "FAIL", "async": "SKIPPED"})
        with open(self.path("a_file"), "w") as f:
            f.write("x")
        proc = backlog("--dry-run", self.path("a_file"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("is not a directory", proc.stderr)

    def test_a_part_named_alone_runs_after_the_smoke_part_and_a_short_budget_skips_with_a_reason(self):
        proc = backlog("--dry-run", self.path("one"), "generate")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(verdicts(self.read("one", "summary.md")), {"smoke": "DRY-RUN", "generate": "DRY-RUN"})
        proc = backlog("--dry-run", self.path("twice"), "tests", "tests", "smoke", "async")
        self.assertEqual(re.findall(r"^\*\*(\w+):", self.read("twice", "summary.md"), re.M),
                         ["smoke", "tests", "async"])  # smoke first; a part named twice runs once
        proc = backlog("--dry-run", self.path("short"), env={"NSS_BACKLOG_BUDGET_S": "15"})
        self.assertEqual(proc.returncode, 1)
        summary = self.read("short", "summary.md")
        self.assertEqual(verdicts(summary), {p: "SKIPPED" for p in PARTS})
        # A loaded machine may spend a second or two before the first part starts.
        self.assertRegex(summary, r"only 1[0-5] s of the 15 s budget left")
        self.assertIn("the smoke part did not pass: nothing else can run", summary)

    def test_the_tensor_parallel_part_runs_when_named_and_compares_two_builds(self):
        proc = backlog("--dry-run", self.path("named"), "tensor_parallel")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(verdicts(self.read("named", "summary.md")),
                         {"smoke": "DRY-RUN", "tensor_parallel": "DRY-RUN"})
        plan = self.read("named", "plan.md")
        self.assertEqual(len(re.findall(r"bin/nss_hpc_base ", plan)), 3)  # three pairs
        self.assertEqual(len(re.findall(r"bin/nss_hpc ", plan)), 3)
        self.assertIn("tensor_parallel", backlog("--list-parts").stdout.split())
        data = self.gpl_data()
        os.mkdir(self.path("nothing"))
        proc = backlog("--rehearse", "--bin", BIN, self.path("no_base"), "tensor_parallel",
                       env={"NSS_BACKLOG_DATA": data, "NSS_BACKLOG_BASE_BIN": self.path("nothing")})
        self.assertEqual(proc.returncode, 1)
        summary = self.read("no_base", "summary.md")
        self.assertEqual(verdicts(summary), {"smoke": "PASS", "tensor_parallel": "SKIPPED"})
        self.assertIn("no build before tensor parallelism at %s/nss_hpc" % self.path("nothing"), summary)
        # This build against itself: the pairs' figures come from the runs, and
        # the verdict is whether 1 lies within their ratios' range.
        proc = backlog("--rehearse", "--bin", BIN, self.path("pairs"), "tensor_parallel",
                       env={"NSS_BACKLOG_DATA": data, "NSS_BACKLOG_BASE_BIN": BIN, "NSS_BACKLOG_PAIRS": "2"},
                       timeout=300)
        summary = self.read("pairs", "summary.md")
        self.assertIn(verdicts(summary)["tensor_parallel"], ("PASS", "FAIL"), summary)
        rows = re.findall(r"^\| (\d) \| (\d+) \| (\d+) \| ([0-9.]+) \|$", summary, re.M)
        self.assertEqual([r[0] for r in rows], ["1", "2"], summary)
        for _, base, new, ratio in rows:
            self.assertAlmostEqual(float(ratio), int(new) / int(base), delta=0.01)
        self.assertRegex(summary, r"new / base [0-9.]+: (1 lies within|outside) the spread of the pairs")

    def test_the_package_never_replaces_a_directory_that_is_not_a_package(self):
        package = os.path.join(SOURCE, "scripts", "bench", "gpu_package.sh")
        os.mkdir(self.path("mine"))
        with open(self.path("mine/notes.txt"), "w") as f:
            f.write("keep me")
        proc = subprocess.run(["bash", package, "--out", self.path("mine")], capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("holds files that are not a package", proc.stderr)
        self.assertEqual(os.listdir(self.path("mine")), ["notes.txt"])
        proc = subprocess.run(["bash", package, "--out", self.path("mine/notes.txt")], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("is not a directory", proc.stderr)

    def test_the_rehearsal_reports_figures_from_the_runs_on_the_cpu(self):
        data = self.path("data")
        os.mkdir(data)
        for split in ("train", "val"):
            licenses = sorted(os.listdir("/usr/share/common-licenses"))
            inputs = [a for name in licenses for a in ("--input", os.path.join("/usr/share/common-licenses", name))
                      if os.path.isfile(os.path.join("/usr/share/common-licenses", name))]
            proc = subprocess.run([binary("nss_prepare_data"), "--format", "text", *inputs, "--output",
                                   os.path.join(data, split + ".h5")], capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stderr)
        proc = backlog("--rehearse", "--bin", BIN, "--work", self.path("work"), self.path("cpu"), "async",
                       "throughput", "adapters", env={"NSS_BACKLOG_DATA": data, "NSS_BACKLOG_RECOMPUTE": ALL_RECOMPUTE},
                       timeout=600)
        summary = self.read("cpu", "summary.md")
        self.assertEqual(proc.returncode, 0, summary + proc.stderr)
        self.assertEqual(verdicts(summary), {"smoke": "PASS", "async": "PASS", "throughput": "PASS",
                                             "adapters": "PASS"})
        self.assertRegex(summary, r"max relative loss difference \d\.\d\de[-+]\d\d \(resumed on the GPU vs on the CPU\)")
        rows = re.findall(r"^\| (recompute \w+, fused kernels \w+|\w+, rank 16[^|]*) \| (\d+) \| ([0-9.]+) \|",
                          summary, re.M)
        self.assertEqual(len(rows), 9, summary)  # six throughput rows, three adapter rows
        self.assertTrue(all(int(tps) > 0 and float(step) > 0 for _, tps, step in rows))
        # What the device tool brings back (at most 8 files): these three; logs and runs stay in --work.
        self.assertEqual(sorted(os.listdir(self.path("cpu"))), ["logs.tar.gz", "plan.md", "summary.md"])
        self.assertIn("1b_lora.log", os.listdir(os.path.join(self.dir, "work", "logs")))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "work", "1b_none_fused0")), "run directories are dropped")

    def test_a_step_past_its_cap_is_killed_with_its_ranks_and_the_part_says_so(self):
        data = self.gpl_data()
        out = self.path("capped")
        proc = backlog("--rehearse", "--bin", BIN, out, "throughput",
                       env={"NSS_BACKLOG_DATA": data, "NSS_BACKLOG_CAPS": "throughput=24",
                            "NSS_BACKLOG_RECOMPUTE": ALL_RECOMPUTE, "NSS_BACKLOG_1B_STEPS": "1000000"},
                       timeout=300)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        summary = self.read("capped", "summary.md")
        self.assertEqual(verdicts(summary)["throughput"], "FAIL")
        # Six rows and the unchunked head's share the part's 24 s, one share kept spare: 24 // 8 s each.
        self.assertIn("killed after its cap of 3 s", self.read("capped", "logs", "1b_none_fused0.log"))
        self.assertIn("the part's cap of 24 s was reached", self.read("capped", "logs", "1b_full_fused1.log"))
        # No rank outlives its step.
        ranks = subprocess.run(["pgrep", "-f", os.path.join(out, "1b_")], capture_output=True, text=True).stdout
        self.assertEqual(ranks.strip(), "")


if __name__ == "__main__":
    unittest.main()
