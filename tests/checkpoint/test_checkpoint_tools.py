"""nss_ckpt and the on-disk format seen from outside: h5py reads every shard
and metadata.json reassembles every tensor; verify names the damaged file,
tensor and block; load falls back past damaged steps at another world size."""
import json
import os
import shutil
import unittest

import numpy as np

import ckpt_helpers as ck
import nss_e2e


class CheckpointToolsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = nss_e2e.scratch("ckpt_tools")
        cls.dir = os.path.join(cls.root, "checkpoints")
        proc = ck.writer(3, "save", "--dir", cls.dir, "--first", 1, "--count", 3,
                         "--block-bytes", 1024)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    @classmethod
    def tearDownClass(cls):
        nss_e2e.remove(cls.root)

    def damaged_copy(self):
        """A private copy of the three committed steps, to damage."""
        copy = nss_e2e.scratch("ckpt_damaged")
        self.addCleanup(nss_e2e.remove, copy)
        target = os.path.join(copy, "checkpoints")
        shutil.copytree(self.dir, target)
        return target

    def test_h5py_reads_every_shard_and_the_index_reassembles_every_tensor(self):
        meta, tensors = ck.read_checkpoint(ck.step_dir(self.dir, 3))
        self.assertEqual(meta["world_size"], 3)
        self.assertEqual(meta["step"], 3)
        self.assertEqual(meta["state"]["step"], 3)
        self.assertEqual(sorted(meta["files"]), ["rank_00000.h5", "rank_00001.h5", "rank_00002.h5"])
        for name in meta["files"]:
            size = os.path.getsize(os.path.join(ck.step_dir(self.dir, 3), name))
            self.assertEqual(meta["files"][name]["bytes"], size)
        self.assertEqual(len(tensors), 63)
        self.assertEqual(tensors["model.layers.1.mlp.down_proj.weight"].shape, (16, 40))
        for name, value in tensors.items():
            want = ck.expected(name, value.size, 3).reshape(value.shape)
            self.assertTrue(np.array_equal(value.view(np.uint32), want.view(np.uint32)), name)

    def test_inspect_lists_tensors_chunks_state_and_sizes(self):
        proc = ck.tool("nss_ckpt", "inspect", ck.step_dir(self.dir, 2))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertIn("step 2, written by 3 rank(s)", out)
        self.assertIn("model.layers.0.self_attn.k_proj.weight  [8, 16] float32", out)
        self.assertIn("optimizer.exp_avg_sq.lm_head.weight  [37, 16] float32", out)
        self.assertIn("rank_00002.h5 /model/unit_003", out)
        self.assertIn("state:", out)
        self.assertIn('"step": 2', out)

    def test_verify_accepts_every_good_step(self):
        proc = ck.tool("nss_ckpt", "verify", self.dir)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.count("OK "), 3)

    def test_flipped_byte_fails_verify_naming_the_block_and_load_falls_back(self):
        d = self.damaged_copy()
        with open(os.path.join(ck.step_dir(d, 3), "metadata.json")) as f:
            meta = json.load(f)
        # The first optimizer chunk long enough to have a block 2 (1024-byte blocks).
        name, chunk = next((n, c) for n, t in sorted(meta["tensors"].items())
                           for c in t["chunks"] if n.startswith("optimizer.") and c["length"] > 600)
        path = os.path.join(ck.step_dir(d, 3), chunk["file"])
        element = 2 * 256 + 7  # block 2 of 1024-byte blocks
        offset = ck.dataset_offset(path, chunk["dataset"]) + (chunk["dataset_offset"] + element) * 4
        with open(path, "r+b") as f:
            f.seek(offset)
            byte = f.read(1)
            f.seek(offset)
            f.write(bytes([byte[0] ^ 0x10]))

        proc = ck.tool("nss_ckpt", "verify", ck.step_dir(d, 3))
        self.assertEqual(proc.returncode, 5, proc.stdout + proc.stderr)
        self.assertIn("checksum mismatch", proc.stdout)
        self.assertIn(chunk["file"], proc.stdout)
        self.assertIn("tensor " + name, proc.stdout)
        self.assertIn("block 2 (bytes [2048, ", proc.stdout)
        self.assertEqual(ck.tool("nss_ckpt", "verify", d).returncode, 5)

        load = ck.writer(2, "load", "--dir", d)
        self.assertEqual(load.returncode, 0, load.stdout + load.stderr)
        line = ck.load_line(load)
        self.assertEqual(line["step"], 2)
        self.assertEqual(line["mismatches"], 0)
        self.assertIn("block 2", line["rejected"][0])
        self.assertIn("NOT USING", load.stderr)

    def test_missing_rank_file_fails_verify_and_load_falls_back(self):
        d = self.damaged_copy()
        os.remove(os.path.join(ck.step_dir(d, 3), "rank_00002.h5"))
        proc = ck.tool("nss_ckpt", "verify", ck.step_dir(d, 3))
        self.assertEqual(proc.returncode, 5)
        self.assertIn("rank_00002.h5 is missing", proc.stdout)
        line = ck.load_line(ck.writer(4, "load", "--dir", d))
        self.assertEqual((line["step"], line["mismatches"]), (2, 0))
        self.assertIn("rank_00002.h5 is missing", line["rejected"][0])

    def test_truncated_metadata_fails_verify_and_load_falls_back(self):
        d = self.damaged_copy()
        path = os.path.join(ck.step_dir(d, 3), "metadata.json")
        os.truncate(path, os.path.getsize(path) // 3)
        proc = ck.tool("nss_ckpt", "verify", ck.step_dir(d, 3))
        self.assertEqual(proc.returncode, 5)
        self.assertIn("is not valid JSON", proc.stdout)
        line = ck.load_line(ck.writer(1, "load", "--dir", d))
        self.assertEqual((line["step"], line["mismatches"]), (2, 0))

    def test_no_loadable_step_is_exit_5_with_every_reason(self):
        d = self.damaged_copy()
        for step in (1, 2, 3):
            os.remove(os.path.join(ck.step_dir(d, step), "rank_00000.h5"))
        load = ck.writer(2, "load", "--dir", d)
        self.assertEqual(load.returncode, 5, load.stdout + load.stderr)
        self.assertIn("can be loaded", load.stderr)
        for step in (1, 2, 3):
            self.assertIn("step_%08d: " % step, load.stderr)

    def test_usage_errors_exit_2(self):
        self.assertEqual(ck.tool("nss_ckpt").returncode, 2)
        proc = ck.tool("nss_ckpt", "verify", os.path.join(self.root, "absent"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("does not exist", proc.stderr)
        self.assertEqual(ck.tool("nss_consolidate", ck.step_dir(self.dir, 1)).returncode, 2)


if __name__ == "__main__":
    unittest.main()
