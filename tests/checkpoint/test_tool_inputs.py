"""What the tools that load weights or read steps refuse, run as the real
binaries on a LoRA step that nss_hpc trained from a tiny pretrained directory:

- a NaN or an infinity wherever weights are loaded is exit 4 naming the file or
  step, the tensor and the element: nss_eval of a Hugging Face directory and of
  a step, nss_consolidate of a step in every format and with a LoRA base for
  --merge-lora, and nss_hpc's model.from_pretrained at 2 ranks, where the rank
  that finds it is not rank 0 and every rank leaves with the same error;
- an output location that cannot take the output is exit 2 for every format,
  with the path and the system's reason, and leaves nothing behind: a parent
  that is a regular file, a file-size limit hit mid-write, a full file system;
- step_N.tmp and step_N.old directories are exit 5 for nss_ckpt verify,
  nss_consolidate and nss_eval, naming the committed step to use;
- nss_ckpt verify reports a rank file with many bad checksum blocks in one line."""
import json
import os
import resource
import shutil
import subprocess
import sys
import unittest

import numpy as np
import xxhash

import ckpt_helpers as ck
import nss_e2e

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "model"))
from hf_files import llama_config, random_llama_weights, write_model_dir  # noqa: E402

STEP = 2
POISONED = "model.layers.0.self_attn.q_proj.lora_B.weight"
FORMATS = (("hdf5",), ("safetensors",), ("hf",), ("hf", "--merge-lora"))
OUTPUT_HINT = "choose another --output"


def tiny_config():
    return llama_config(hidden=32, intermediate=48, layers=2, heads=4, kv_heads=2, vocab=300)


def write_pretrained(path, change=None):
    """A tiny Hugging Face directory; `change(weights)` edits the weights first."""
    weights = random_llama_weights(tiny_config(), seed=1, scale=0.05)
    if change:
        change(weights)
    write_model_dir(path, tiny_config(), weights)


def poison_step_value(step_dir, tensor, element, value):
    """Writes `value` over one float32 element of `tensor` in its rank file and
    recomputes that chunk's checksums: an edit only a value check can see."""
    index = os.path.join(step_dir, "metadata.json")
    with open(index) as f:
        meta = json.load(f)
    record = meta["tensors"][tensor]
    assert record["dtype"] == "float32", record["dtype"]
    chunk = next(c for c in record["chunks"]
                 if c["tensor_offset"] <= element < c["tensor_offset"] + c["length"])
    path = os.path.join(step_dir, chunk["file"])
    start = ck.dataset_offset(path, chunk["dataset"]) + chunk["dataset_offset"] * 4
    with open(path, "r+b") as f:
        f.seek(start + (element - chunk["tensor_offset"]) * 4)
        f.write(np.array([value], dtype="<f4").tobytes())
        f.seek(start)
        raw = f.read(chunk["length"] * 4)
    block = meta["checksum_block_bytes"]
    chunk["checksums"] = [xxhash.xxh3_64_hexdigest(raw[i:i + block])
                          for i in range(0, len(raw), block)]
    with open(index, "w") as f:
        json.dump(meta, f)


def limit_file_size(limit):
    """preexec_fn: files of this process may not grow beyond `limit` bytes (the
    tool itself ignores SIGXFSZ, so writes fail with EFBIG)."""
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


class ToolInputsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = nss_e2e.scratch("tool_inputs")
        cls.addClassCleanup(nss_e2e.remove, cls.root)
        cls.base = os.path.join(cls.root, "base")
        write_pretrained(cls.base)
        cls.data = nss_e2e.write_token_dataset(os.path.join(cls.root, "train.h5"), tokens=4096)
        cls.yaml = nss_e2e.write(os.path.join(cls.root, "run.yaml"), """\
model:
  from_pretrained: %s
data:
  path: %s
  seq_len: 32
training:
  global_batch_size: 2
  micro_batch_size: 1
  max_steps: %d
  warmup_steps: 1
  lr: 0.01
  lora:
    enabled: true
    rank: 4
    targets: [q_proj, v_proj]
checkpoint:
  interval_steps: %d
""" % (cls.base, cls.data, STEP, STEP))
        run = os.path.join(cls.root, "run")
        proc = nss_e2e.mpirun(1, [nss_e2e.binary("nss_hpc"), cls.yaml, "--set",
                                  "run.output_dir=" + run], timeout=240)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        cls.checkpoints = os.path.join(run, "checkpoints")
        cls.step = ck.step_dir(cls.checkpoints, STEP)

    def scratch_dir(self, name):
        path = os.path.join(self.root, name)
        os.makedirs(path)
        self.addCleanup(nss_e2e.remove, path)
        return path

    def copy_checkpoints(self, name):
        """A private copy of the run's checkpoint directory, to change."""
        copy = os.path.join(self.scratch_dir(name), "checkpoints")
        shutil.copytree(self.checkpoints, copy)
        return copy

    def eval(self, model):
        return subprocess.run([nss_e2e.binary("nss_eval"), "--model", model, "--data", self.data,
                               "--seq-len", "16", "--batches", "1"],
                              capture_output=True, text=True, timeout=120)

    def consolidate(self, step, output, *args, preexec_fn=None):
        return subprocess.run([nss_e2e.binary("nss_consolidate"), step, "--output", output]
                              + ["--format"] + list(args), capture_output=True, text=True,
                              timeout=120, preexec_fn=preexec_fn)

    def expect(self, proc, code, *messages):
        self.assertEqual(proc.returncode, code, proc.stdout + proc.stderr)
        for message in messages:
            self.assertIn(message, proc.stderr)

    # --- non-finite weights: exit 4 ---------------------------------------

    def test_a_non_finite_weight_in_a_hf_directory_is_exit_4_for_nss_eval(self):
        where = self.scratch_dir("hf_nan")
        for name, value, text in (("nan", float("nan"), "nan"), ("inf", float("-inf"), "-inf")):
            model = os.path.join(where, name)

            def poison(weights, value=value):
                weights["model.layers.1.mlp.up_proj.weight"][3, 5] = value
            write_pretrained(model, poison)
            proc = self.eval(model)
            self.expect(proc, 4, "%s/model.safetensors: tensor 'model.layers.1.mlp.up_proj.weight'"
                        " holds %s at element %d" % (model, text, 3 * 32 + 5))
            self.assertEqual(proc.stdout, "")

    def test_a_non_finite_value_in_a_step_is_exit_4_for_nss_eval_and_every_format(self):
        checkpoints = self.copy_checkpoints("step_nan")
        step = ck.step_dir(checkpoints, STEP)
        poison_step_value(step, POISONED, 9, float("inf"))
        # The checksums hold: only the value check sees the edit.
        self.assertEqual(ck.tool("nss_ckpt", "verify", step).returncode, 0)
        message = "%s: tensor '%s' holds inf at element 9" % (step, POISONED)
        self.expect(self.eval(step), 4, message)
        out = self.scratch_dir("step_nan_out")
        for args in FORMATS:
            with self.subTest(format=args):
                self.expect(self.consolidate(step, os.path.join(out, "x"), *args), 4, message)
                self.assertEqual(os.listdir(out), [])

    def test_a_non_finite_lora_base_is_exit_4_for_merge_lora_and_nss_eval(self):
        where = self.scratch_dir("base_nan")
        base = os.path.join(where, "base")

        def poison(weights):
            weights["model.layers.0.self_attn.q_proj.weight"][0, 7] = float("nan")
        write_pretrained(base, poison)
        # The step's stored configuration and LoRA base point at the damaged copy.
        checkpoints = self.copy_checkpoints("base_nan_step")
        step = ck.step_dir(checkpoints, STEP)
        with open(os.path.join(step, "metadata.json")) as f:
            meta = json.load(f)
        meta["state"]["config"] = meta["state"]["config"].replace(self.base, base)
        meta["state"]["lora_base"]["path"] = base
        with open(os.path.join(step, "metadata.json"), "w") as f:
            json.dump(meta, f)
        message = "%s/model.safetensors: tensor 'model.layers.0.self_attn.q_proj.weight' holds " \
                  "nan at element 7" % base
        out = os.path.join(where, "merged")
        self.expect(self.consolidate(step, out, "hf", "--merge-lora"), 4, message)
        self.assertEqual(sorted(os.listdir(where)), ["base"])
        self.expect(self.eval(step), 4, message)

    def test_a_non_finite_pretrained_weight_is_exit_4_on_every_rank(self):
        where = self.scratch_dir("from_pretrained_nan")
        base = os.path.join(where, "base")
        # The last element of lm_head.weight, the last unit's last element: rank 1's shard.
        vocab, hidden = 300, 32

        def poison(weights):
            weights["lm_head.weight"][vocab - 1, hidden - 1] = float("nan")
        write_pretrained(base, poison)
        run = os.path.join(where, "run")
        proc = nss_e2e.mpirun(2, [nss_e2e.binary("nss_hpc"), self.yaml, "--set",
                                  "model.from_pretrained=" + base, "--set",
                                  "run.output_dir=" + run], timeout=240)
        output = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 4, output)
        message = "%s/model.safetensors: tensor 'lm_head.weight' holds nan at element %d" % (
            base, vocab * hidden - 1)
        # Agreed: rank 0 prints rank 1's error once and every rank exits 4 (no MPI_Abort).
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)
        self.assertIn(message, output)
        self.assertNotIn("MPI_ABORT", output)
        self.assertNotIn("step 1/", output)
        self.assertFalse(os.path.exists(os.path.join(run, "checkpoints", "latest")))

    # --- an output location that cannot take the output: exit 2 ------------

    def test_an_output_below_a_regular_file_is_exit_2_for_every_format(self):
        where = self.scratch_dir("below_file")
        regular = nss_e2e.write(os.path.join(where, "file"), "not a directory\n")
        for args in FORMATS:
            with self.subTest(format=args):
                output = os.path.join(regular, "out")
                proc = self.consolidate(self.step, output, *args)
                self.expect(proc, 2, "cannot create %s.tmp." % output, ": Not a directory",
                            OUTPUT_HINT)
                self.assertEqual(os.listdir(where), ["file"])

    def test_a_file_size_limit_hit_mid_write_is_exit_2_and_leaves_nothing(self):
        where = self.scratch_dir("fsize")
        for args in FORMATS:
            with self.subTest(format=args):
                output = os.path.join(where, "out")
                # 2 KiB: config.json fits, no weights file does.
                proc = self.consolidate(self.step, output, *args,
                                        preexec_fn=limit_file_size(2048))
                self.expect(proc, 2, "File too large", output + ".tmp.", OUTPUT_HINT)
                self.assertEqual(os.listdir(where), [])

    def test_a_full_file_system_is_exit_2_and_leaves_nothing(self):
        where = self.scratch_dir("full")
        if os.geteuid() != 0:
            self.skipTest("mounting a small tmpfs needs root")
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", where],
                          capture_output=True).returncode != 0:
            self.skipTest("this machine does not allow mounting a tmpfs")
        self.addCleanup(subprocess.run, ["umount", where])
        for args in FORMATS:
            with self.subTest(format=args):
                output = os.path.join(where, "out")
                proc = self.consolidate(self.step, output, *args)
                self.expect(proc, 2, "No space left on device", OUTPUT_HINT)
                self.assertEqual(os.listdir(where), [])

    # --- uncommitted step directories: exit 5 -------------------------------

    def test_tmp_and_old_step_directories_are_exit_5_for_every_tool(self):
        checkpoints = self.copy_checkpoints("uncommitted")
        committed = ck.step_dir(checkpoints, STEP)
        # As a crash leaves them: metadata.json written, the rename not done;
        # and a step half pruned.
        tmp = ck.step_dir(checkpoints, 3) + ".tmp"
        old = ck.step_dir(checkpoints, 1) + ".old"
        shutil.copytree(committed, tmp)
        shutil.copytree(committed, old)
        bare_tmp = ck.step_dir(checkpoints, 4) + ".tmp"
        os.makedirs(bare_tmp)
        use = "use the committed step %s (the one %s/latest names)" % (committed, checkpoints)
        out = self.scratch_dir("uncommitted_out")
        for step, message in ((tmp, "%s was never committed" % tmp),
                              (bare_tmp, "%s was never committed" % bare_tmp),
                              (old, "%s is a step being pruned" % old)):
            with self.subTest(step=step):
                self.expect(ck.tool("nss_ckpt", "verify", step), 5, message, use)
                self.expect(self.consolidate(step, os.path.join(out, "x"), "hdf5"), 5, message,
                            use)
                self.assertEqual(os.listdir(out), [])
                self.expect(self.eval(step), 5, message, use)
        # The checkpoint directory itself verifies its one committed step only.
        proc = ck.tool("nss_ckpt", "verify", checkpoints)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.splitlines(), [line for line in proc.stdout.splitlines()
                                                    if line.startswith("OK " + committed)])

    # --- nss_ckpt verify: one line per damaged file -------------------------

    def test_verify_reports_a_damaged_file_once_with_its_bad_blocks_counted(self):
        checkpoints = os.path.join(self.scratch_dir("verify"), "checkpoints")
        block = 256
        proc = ck.writer(2, "save", "--dir", checkpoints, "--first", 1, "--block-bytes", block)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        step = ck.step_dir(checkpoints, 1)
        with open(os.path.join(step, "metadata.json")) as f:
            meta = json.load(f)
        # Every block of the two largest chunks of rank_00001.h5 gets one flipped byte.
        chunks = sorted(((c["length"], name, c) for name, t in meta["tensors"].items()
                         for c in t["chunks"] if c["file"] == "rank_00001.h5"),
                        key=lambda item: item[0])[-2:]
        path = os.path.join(step, "rank_00001.h5")
        blocks = {}
        with open(path, "r+b") as f:
            for length, name, c in chunks:
                start = ck.dataset_offset(path, c["dataset"]) + c["dataset_offset"] * 4
                blocks[name] = (length * 4 + block - 1) // block
                for b in range(blocks[name]):
                    f.seek(start + b * block)
                    byte = f.read(1)
                    f.seek(-1, os.SEEK_CUR)
                    f.write(bytes([byte[0] ^ 0x40]))
        total = sum(blocks.values())
        self.assertGreater(total, 10)
        proc = ck.tool("nss_ckpt", "verify", step)
        self.assertEqual(proc.returncode, 5, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], "FAILED %s: 1 problem(s)" % step, proc.stdout)
        self.assertEqual(len(lines), 2, proc.stdout)
        self.assertIn("%s: %d checksum blocks fail, in 2 tensors: " % (path, total), lines[1])
        for name, count in blocks.items():
            self.assertEqual(lines[1].count(name + " (dataset "), 1, lines[1])
            self.assertIn(": %d blocks)" % count, lines[1])
        self.assertIn("; the first: checksum mismatch in %s" % path, lines[1])


if __name__ == "__main__":
    unittest.main()
