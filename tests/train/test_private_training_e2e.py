"""DP-SGD end to end (docs/privacy.md): a LoRA run with privacy on, on
instruction examples one per row (data.packing none), logs the plan once,
reports epsilon in metrics.jsonl (rising to at most the target at the last
step, as an independent call of the accountant gives it), keeps its secret key
in metadata.json "secrets" alone (owner-only permissions, in no log, metric,
configuration, preflight report or export), writes privacy.json (epsilon,
delta, the mechanism, what is not covered) into every export, and resumes at 1 and 3 ranks from
a 2-rank step with the uninterrupted run's losses and epsilons; a resume with
another clipping norm or with privacy off, or from a step whose key is
missing or malformed, is exit 5; a batch larger than the
data is exit 4 and an unreachable target epsilon exit 2, on every rank; the
preflight reports the privacy budget (preflight.json "privacy", no key) and
refuses a given sigma that overspends the target (exit 2)."""
import json
import os
import shutil
import stat
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import binary, remove, scratch, train  # noqa: E402
from test_sft_training_e2e import prepare_sft  # noqa: E402

STEPS = 6
PRIVATE = ["training.lora.enabled=true", "training.lora.rank=4", "data.packing=none",
           "privacy.enabled=true", "privacy.target_epsilon=4", "privacy.max_grad_norm=0.5"]


def step_records(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return {r["step"]: r for r in records if "event" not in r and "step" in r}


class PrivateTrainingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("private_training")
        cls.data = prepare_sft(cls.tmp, "train", 600, 1)
        cls.reference, cls.reference_output = cls.train(cls, 2, "uninterrupted")

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def train(self, ranks, name, *sets, expect=0):
        run_dir = os.path.join(self.tmp, name)
        fixed = ["data.path=" + self.data,
                 "eval.interval_steps=0",
                 "data.seq_len=48",
                 "training.global_batch_size=12",
                 "training.micro_batch_size=3",
                 "training.max_steps=%d" % STEPS,
                 "training.warmup_steps=1",
                 "logging.interval_steps=1",
                 "checkpoint.interval_steps=3",
                 "preflight.enabled=false"]
        return run_dir, train(ranks, run_dir, fixed + PRIVATE + list(sets), expect=expect)

    def step(self, number):
        return os.path.join(self.reference, "checkpoints", "step_%08d" % number)

    def test_selective_recompute_takes_the_same_private_steps(self):
        # Per-example adapter gradients flow through the kept attention (the
        # default q, k, v adapters feed it), and Poisson batches leave a rank
        # rows of padding alone: resumed from the reference's step 3 (its
        # secret key, so its batches and noise), selective recompute takes the
        # same clipped, noised steps bit for bit.
        run_dir, _ = self.train(2, "selective", "checkpoint.resume=" + self.step(3),
                                "training.activation_checkpointing=selective")
        selective, reference = step_records(run_dir), step_records(self.reference)
        self.assertEqual(sorted(selective), list(range(4, STEPS + 1)))
        for step in selective:
            self.assertEqual((selective[step]["loss"], selective[step]["grad_norm"]),
                             (reference[step]["loss"], reference[step]["grad_norm"]), step)

    def test_epsilon_is_reported_and_spends_the_target(self):
        records = step_records(self.reference)
        self.assertEqual(sorted(records), list(range(1, STEPS + 1)))
        epsilons = [records[s]["epsilon"] for s in range(1, STEPS + 1)]
        self.assertEqual(epsilons, sorted(epsilons))
        self.assertGreater(epsilons[0], 0)
        # Calibrated so that max_steps spend the target (bisection from above).
        self.assertLessEqual(epsilons[-1], 4.0)
        self.assertGreater(epsilons[-1], 3.9)
        self.assertEqual(self.reference_output.count("[privacy] DP-SGD over 600 privacy units"), 1,
                         self.reference_output)
        self.assertIn("training.grad_clip is not applied", self.reference_output)
        with open(os.path.join(self.step(STEPS), "metadata.json")) as f:
            state = json.load(f)["state"]["privacy"]
        self.assertEqual(state["units"], 600)
        self.assertAlmostEqual(state["sampling_rate"], 12 / 600)
        self.assertAlmostEqual(state["delta"], 600 ** -1.2)
        # The epsilon reported is the accountant's for (q, sigma, steps, delta).
        # The reported epsilon is the PRV accountant's upper bound (column 9 of
        # accountant_probe's table).
        for step in (1, STEPS):
            probe = subprocess.run([binary("accountant_probe"), "epsilon"], input="%r %r %d %r\n" % (
                state["sampling_rate"], state["noise_multiplier"], step, state["delta"]),
                capture_output=True, text=True)
            self.assertEqual(probe.returncode, 0, probe.stderr)
            self.assertAlmostEqual(records[step]["epsilon"], float(probe.stdout.split()[8]),
                                   delta=1e-9 * records[step]["epsilon"])

    def test_the_key_is_only_in_the_checkpoints_secrets(self):
        with open(os.path.join(self.step(STEPS), "metadata.json")) as f:
            key = json.load(f)["secrets"]["privacy_key"]
        self.assertRegex(key, "^[0-9a-f]{64}$")
        for step in (3, STEPS):
            mode = os.stat(os.path.join(self.step(step), "metadata.json")).st_mode
            self.assertEqual(stat.S_IMODE(mode) & 0o077, 0, "metadata.json readable by others")
        self.assertNotIn(key, self.reference_output)
        for root, _, files in os.walk(self.reference):
            for name in files:
                path = os.path.join(root, name)
                if name == "metadata.json" or name.endswith(".h5"):
                    continue
                with open(path, "rb") as f:
                    self.assertNotIn(key.encode(), f.read(), path)
        out = os.path.join(self.tmp, "export")
        proc = subprocess.run([binary("nss_consolidate"), self.step(STEPS), "--output", out,
                               "--format", "hdf5"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertTrue(os.path.isfile(out + ".privacy.json"))
        for path in (out, out + ".privacy.json"):
            with open(path, "rb") as f:
                self.assertNotIn(key.encode(), f.read(), path)

    def test_every_export_carries_its_guarantee(self):
        epsilon = step_records(self.reference)[STEPS]["epsilon"]
        adapters = os.path.join(self.tmp, "adapters")
        proc = subprocess.run([binary("nss_consolidate"), self.step(STEPS), "--output", adapters,
                               "--format", "hf"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertTrue(os.path.isfile(os.path.join(adapters, "adapter_config.json")))
        single = os.path.join(self.tmp, "adapters.safetensors")
        proc = subprocess.run([binary("nss_consolidate"), self.step(3), "--output", single,
                               "--format", "safetensors"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        for path, step in ((os.path.join(adapters, "privacy.json"), STEPS),
                           (single + ".privacy.json", 3)):
            with open(path) as f:
                report = json.load(f)
            self.assertEqual(report["steps"], step)
            self.assertEqual(report["epsilon"], step_records(self.reference)[step]["epsilon"])
            self.assertAlmostEqual(report["delta"], 600 ** -1.2)
            self.assertEqual(report["max_grad_norm"], 0.5)
            self.assertEqual(report["sampling"], "poisson")
            self.assertEqual(report["accountant"], "prv")
            self.assertLessEqual(report["epsilon_bounds"]["lower"], report["epsilon"])
            self.assertTrue(any("metrics.jsonl" in item for item in report["not_covered"]))
            self.assertNotIn("warning", report)
        self.assertLessEqual(epsilon, 4.0)

    def test_resume_at_another_world_size_continues_the_same_run(self):
        reference = step_records(self.reference)
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                run_dir, output = self.train(ranks, "resume_%d" % ranks,
                                             "checkpoint.resume=" + self.step(3))
                self.assertIn("saved by 2 ranks, now %d" % ranks, output)
                records = step_records(run_dir)
                self.assertEqual(sorted(records), list(range(4, STEPS + 1)))
                for step in range(4, STEPS + 1):
                    self.assertAlmostEqual(records[step]["loss"], reference[step]["loss"],
                                           delta=1e-5 * reference[step]["loss"], msg="step %d" % step)
                    self.assertAlmostEqual(records[step]["grad_norm"], reference[step]["grad_norm"],
                                           delta=1e-4 * reference[step]["grad_norm"])
                    self.assertEqual(records[step]["epsilon"], reference[step]["epsilon"])

    def test_other_privacy_settings_are_refused_at_resume(self):
        for name, sets in (("norm", ["privacy.max_grad_norm=1.0"]),
                           ("off", ["privacy.enabled=false"])):
            with self.subTest(name=name):
                _, output = self.train(2, "other_" + name, "checkpoint.resume=" + self.step(3),
                                       *sets, expect=5)
                self.assertIn("other privacy settings", output)

    def test_a_step_without_its_key_is_refused(self):
        for name, secrets in (("missing", None), ("malformed", {"privacy_key": "not hex"})):
            with self.subTest(name=name):
                copy = os.path.join(self.tmp, "keyless_" + name, "step_%08d" % 3)
                shutil.copytree(self.step(3), copy)
                path = os.path.join(copy, "metadata.json")
                with open(path) as f:
                    metadata = json.load(f)
                if secrets is None:
                    del metadata["secrets"]
                else:
                    metadata["secrets"] = secrets
                with open(path, "w") as f:
                    json.dump(metadata, f)
                _, output = self.train(2, "keyless_run_" + name, "checkpoint.resume=" + copy,
                                       expect=5)
                self.assertIn("privacy", output)
                self.assertNotIn("not hex", output)

    def test_a_batch_larger_than_the_data_is_refused_on_every_rank(self):
        _, output = self.train(2, "too_large", "training.global_batch_size=700", expect=4)
        # The privacy plan's refusal (q = B / n > 1), agreed by every rank and
        # reported once; windows are not what a Poisson batch is drawn from.
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)
        self.assertIn("training.global_batch_size (700) exceeds the privacy units of the data (600)", output)

    def test_an_unreachable_target_is_refused_on_every_rank(self):
        _, output = self.train(2, "unreachable", "privacy.target_epsilon=0.001", expect=2)
        # Agreed by every rank, reported once.
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)
        self.assertIn("[privacy] target epsilon 0.001 is out of reach", output)

    def test_the_preflight_reports_the_privacy_budget(self):
        run_dir, output = self.train(2, "preflight", "preflight.enabled=true")
        with open(os.path.join(run_dir, "preflight.json")) as f:
            text = f.read()
        report = json.loads(text)
        self.assertEqual(report["verdict"], "go", output)
        check = next(c for c in report["checks"] if c["id"] == "privacy.budget")
        self.assertEqual(check["status"], "warn")  # 600 units: few
        self.assertIn("only 600 privacy units", check["message"])
        self.assertIn("a step at the 1e-6 batch bound", check["message"])
        privacy = report["privacy"]
        self.assertEqual(privacy["units"], 600)
        self.assertTrue(privacy["calibrated"])
        self.assertEqual(privacy["planned_steps"], STEPS)
        # The epsilon the plan spends is the one the last step reports.
        self.assertEqual(privacy["epsilon"], step_records(run_dir)[STEPS]["epsilon"])
        self.assertGreaterEqual(privacy["batch_bound_1e6"], privacy["expected_batch"])
        self.assertGreaterEqual(privacy["micro_steps_bound"], privacy["micro_steps_expected"])
        self.assertGreater(privacy["bound_step_seconds"], 0)
        self.assertLessEqual(privacy["longest_example"], 1000)
        with open(os.path.join(run_dir, "checkpoints", "step_%08d" % STEPS, "metadata.json")) as f:
            metadata = json.load(f)
        self.assertEqual(privacy["noise_multiplier"], metadata["state"]["privacy"]["noise_multiplier"])
        self.assertNotIn(metadata["secrets"]["privacy_key"], text)
        # A given sigma that spends more than the target is refused before training.
        run_dir, output = self.train(2, "preflight_overspend", "preflight.enabled=true",
                                     "privacy.noise_multiplier=0.3", "privacy.target_epsilon=1",
                                     expect=2)
        self.assertIn("[privacy.budget] privacy.noise_multiplier 0.3 spends epsilon", output)
        self.assertIn("more than privacy.target_epsilon 1", output)
        with open(os.path.join(run_dir, "preflight.json")) as f:
            report = json.load(f)
        self.assertEqual((report["verdict"], report["exit_code"]), ("no-go", 2))
        self.assertFalse(os.path.exists(os.path.join(run_dir, "metrics.jsonl")))


if __name__ == "__main__":
    unittest.main()
