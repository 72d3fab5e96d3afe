"""Options that used to be read in two places, through the real binaries:
every choice (configuration keys in YAML and --set, the tools' choice
options) is read by one parser; a quantisation or merge that a step cannot
have is exit 2 instead of silently ignored or exit 5; a CSV column without a
name is exit 4."""
import glob
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from nss_e2e import SOURCE, ScratchDirTest, binary, mpirun  # noqa: E402

FIXTURE = sorted(glob.glob(os.path.join(SOURCE, "tests", "fixtures", "formats_*")))[-1]
FULL_STEP = os.path.join(FIXTURE, "runs", "full", "checkpoints", "step_00000004")
LORA_STEP = os.path.join(FIXTURE, "runs", "qlora_private", "checkpoints", "step_00000003")
RECORDS = os.path.join(FIXTURE, "data", "records.h5")
CONFIG = os.path.join(SOURCE, "configs", "run.yaml")


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300)


class ToolOptionsTest(ScratchDirTest):
    SCRATCH_TAG = "tool_options"

    def resolved(self, config, *sets):
        args = [binary("nss_hpc"), config, "--print-config"]
        for s in sets:
            args += ["--set", s]
        proc = mpirun(1, args)
        return proc.returncode, proc.stdout + proc.stderr

    def test_choice_keys_read_the_same_in_yaml_and_through_set(self):
        for key, value, written in (("training.activation_checkpointing", "TRUE", '"full"'),
                                    ("training.activation_checkpointing", "off", '"none"'),
                                    ("parallel.reshard_after_forward", "TRUE", '"true"'),
                                    ("parallel.reshard_after_forward", "yes", '"true"'),
                                    ("parallel.reshard_after_forward", "No", '"false"'),
                                    ("training.dtype", "BF16", '"bf16"'),
                                    ("training.dtype", "bf16 ", '"bf16"')):
            section, name = key.split(".")
            with self.subTest(key=key, value=value):
                code, through_set = self.resolved(CONFIG, "%s=%s" % (key, value))
                self.assertEqual(code, 0, through_set)
                self.assertIn("%s: %s" % (name, written), through_set)
                yaml = self.write("c.yaml", ('%s:\n  %s: "%s"\n' % (section, name, value)).encode())
                code, in_yaml = self.resolved(yaml)
                self.assertEqual(code, 0, in_yaml)
                self.assertIn("%s: %s" % (name, written), in_yaml)
        code, output = self.resolved(CONFIG, "training.lr_schedule=yes")
        self.assertEqual(code, 2, output)
        self.assertIn("training.lr_schedule: must be one of cosine, linear, constant", output)

    def test_tool_choice_options_use_the_same_parser(self):
        proc = run(binary("nss_eval"), "--model", FULL_STEP, "--data", RECORDS, "--seq-len", 64, "--batches", 1,
                   "--batch-size", 2, "--packing", " NONE", "--quantize", "Auto")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for tool, flag, value, choices in (
                ("nss_eval", "--packing", "rows", "windows, documents or none"),
                ("nss_eval", "--quantize", "nf5", "auto, none or nf4"),
                ("nss_generate", "--dtype", "fp16", "auto, fp32 or bf16")):
            with self.subTest(tool=tool, flag=flag):
                args = [binary(tool), "--model", FULL_STEP, flag, value]
                args += ["--data", RECORDS] if tool == "nss_eval" else ["--prompt", "x"]
                proc = run(*args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("unknown %s '%s': %s must be %s" % (flag, value, flag, choices), proc.stderr)
        proc = run(binary("nss_consolidate"), FULL_STEP, "--output", self.path("x"), "--format", "npz")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("unknown --format 'npz': --format must be hdf5, safetensors or hf", proc.stderr)

    def test_quantising_a_fully_fine_tuned_step_is_refused(self):
        for flags in (["--double-quant"], ["--quantize", "nf4"], ["--quantize", "nf4", "--double-quant"]):
            with self.subTest(flags=flags):
                proc = run(binary("nss_eval"), "--model", FULL_STEP, "--data", RECORDS, "--seq-len", 64, *flags)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("was fully fine-tuned", proc.stderr)
                generated = run(binary("nss_generate"), "--model", FULL_STEP, "--prompt", "x", *flags)
                self.assertEqual(generated.returncode, 2, generated.stderr)
                self.assertIn("was fully fine-tuned", generated.stderr)
        # A QLoRA step's base takes them.
        proc = run(binary("nss_eval"), "--model", LORA_STEP, "--data", RECORDS, "--seq-len", 64, "--batches", 1,
                   "--double-quant")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_merging_a_step_trained_from_random_weights_is_a_usage_error(self):
        for flags in (["--merge-lora"], ["--merge-lora", "--dequantized-base"]):
            for fmt in ("hf", "safetensors"):
                with self.subTest(flags=flags, format=fmt):
                    output = self.path("merged_" + fmt)
                    proc = run(binary("nss_consolidate"), LORA_STEP, "--output", output, "--format", fmt, *flags)
                    self.assertEqual(proc.returncode, 2, proc.stderr)
                    self.assertIn("trained from a random initialisation", proc.stderr)
                    self.assertIn("drop --merge-lora", proc.stderr)
                    self.assertEqual(os.listdir(self.dir), [])

    def test_a_csv_column_without_a_name_is_a_data_error(self):
        table = self.write("t.csv", b"city,,rain\nOslo,12,yes\n")
        for fmt in ("csv", "records"):
            with self.subTest(format=fmt):
                proc = run(binary("nss_prepare_data"), "--input", table, "--output", self.path("t.h5"), "--format",
                           fmt)
                self.assertEqual(proc.returncode, 4, proc.stderr)
                self.assertIn("t.csv:1: the CSV header's column 2 has no name", proc.stderr)
                self.assertFalse(os.path.exists(self.path("t.h5")))


if __name__ == "__main__":
    unittest.main()
