"""nss_consolidate: output equal bit for bit to the shards, dtype conversion
with round-to-nearest-even, a 4 MiB budget honoured for tensors larger than
that (peak RSS measured), and nothing left behind when a step is damaged."""
import os
import shutil
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

import ckpt_helpers as ck
import nss_e2e

# 8192 x 256 float32 embedding and LM head: 8 MiB each, twice the budget.
BIG_SHAPE = "8192,256,512,1,128"


def peak_rss_kib(args):
    """Runs a tool to completion under GNU time; returns (exit code, peak resident KiB, output).
    (A child forked from Python inherits Python's peak RSS through exec; GNU time is small.)"""
    with tempfile.NamedTemporaryFile("r") as report:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name] + args,
                              capture_output=True, text=True)
        return proc.returncode, int(report.read().split()[-1]), proc.stdout + proc.stderr


def bf16_bits(values):
    bits = values.view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


class ConsolidateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = nss_e2e.scratch("ckpt_consolidate")
        cls.small = os.path.join(cls.root, "small")
        cls.big = os.path.join(cls.root, "big")
        for args in ((2, "--dir", cls.small, "--block-bytes", 4096),
                     (2, "--dir", cls.big, "--shape", BIG_SHAPE)):
            proc = ck.writer(args[0], "save", "--first", 7, *args[1:])
            assert proc.returncode == 0, proc.stdout + proc.stderr

    @classmethod
    def tearDownClass(cls):
        nss_e2e.remove(cls.root)

    def output(self, name):
        return os.path.join(self.root, name)

    def test_hdf5_output_is_bitwise_the_shards(self):
        out = self.output("small.h5")
        proc = ck.tool("nss_consolidate", ck.step_dir(self.small, 7), "--output", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("63 tensors", proc.stdout)
        meta, shards = ck.read_checkpoint(ck.step_dir(self.small, 7))
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["step"], 7)
            self.assertEqual(f.attrs["format"], b"nss-dcp-consolidated"
                             if isinstance(f.attrs["format"], bytes) else "nss-dcp-consolidated")
            self.assertEqual(sorted(f.keys()), sorted(shards))
            for name, want in shards.items():
                got = f[name][()]
                self.assertEqual(got.shape, want.shape, name)
                self.assertEqual(got.dtype, np.float32, name)
                self.assertTrue(np.array_equal(got.view(np.uint32), want.view(np.uint32)), name)

    def test_bfloat16_and_float16_round_to_nearest_even(self):
        _, shards = ck.read_checkpoint(ck.step_dir(self.small, 7))
        for dtype in ("bfloat16", "float16"):
            out = self.output("small_%s.h5" % dtype)
            proc = ck.tool("nss_consolidate", ck.step_dir(self.small, 7), "--output", out,
                           "--dtype", dtype)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with h5py.File(out, "r") as f:
                for name, value in shards.items():
                    got = f[name][()]
                    attr = f[name].attrs["dtype"]
                    self.assertEqual(attr.decode() if isinstance(attr, bytes) else attr, dtype)
                    want = (bf16_bits(value) if dtype == "bfloat16"
                            else value.astype(np.float16).view(np.uint16))
                    self.assertTrue(np.array_equal(got.view(np.uint16), want), name)

    def test_a_4mib_budget_holds_for_tensors_larger_than_it(self):
        step = ck.step_dir(self.big, 7)
        embed_bytes = 8192 * 256 * 4
        self.assertGreater(embed_bytes, 4 << 20)
        binary = nss_e2e.binary("nss_consolidate")
        # Baseline: the same program on a tiny checkpoint (code, libraries, HDF5 caches).
        rc, base, _ = peak_rss_kib([binary, ck.step_dir(self.small, 7), "--output",
                                    self.output("base.h5"), "--max-memory", "4MiB"])
        self.assertEqual(rc, 0)
        rc, tight, out = peak_rss_kib([binary, step, "--output", self.output("big_4m.h5"),
                                       "--max-memory", "4MiB"])
        self.assertEqual(rc, 0, out)
        rc, loose, _ = peak_rss_kib([binary, step, "--output", self.output("big_256m.h5"),
                                     "--max-memory", "256MiB"])
        self.assertEqual(rc, 0)
        print("\npeak RSS: baseline %.1f MiB, 4MiB budget %.1f MiB, 256MiB budget %.1f MiB"
              % (base / 1024, tight / 1024, loose / 1024))
        self.assertLessEqual(tight - base, 4 * 1024, "peak grew by more than the budget")
        self.assertGreater(loose - base, tight - base)  # the budget is what bounds it
        _, shards = ck.read_checkpoint(step)
        with h5py.File(self.output("big_4m.h5"), "r") as f:
            for name in ("model.embed_tokens.weight", "lm_head.weight",
                         "optimizer.exp_avg_sq.model.embed_tokens.weight"):
                self.assertTrue(np.array_equal(f[name][()].view(np.uint32),
                                               shards[name].view(np.uint32)), name)

    def test_a_damaged_step_leaves_no_output(self):
        copy = os.path.join(self.root, "damaged")
        shutil.copytree(self.small, copy)
        path = os.path.join(ck.step_dir(copy, 7), "rank_00001.h5")
        offset = ck.dataset_offset(path, "/optimizer/exp_avg_sq/unit_003") + 40
        with open(path, "r+b") as f:
            f.seek(offset)
            f.write(b"\x7f")
        out = self.output("damaged.h5")
        proc = ck.tool("nss_consolidate", ck.step_dir(copy, 7), "--output", out)
        self.assertEqual(proc.returncode, 5, proc.stdout + proc.stderr)
        self.assertIn("checksum mismatch", proc.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([n for n in os.listdir(self.root) if n.startswith("damaged.h5")], [])

    def test_bad_options_exit_2(self):
        step = ck.step_dir(self.small, 7)
        existing = self.output("existing.h5")
        open(existing, "w").close()
        for args, message in (((step, "--output", existing), "already exists"),
                              ((step, "--output", self.output("x.h5"), "--format", "npz"),
                               "unknown --format"),
                              ((step, "--output", self.output("x.h5"), "--dtype", "int8"),
                               "floating type"),
                              ((step, "--output", self.output("x.h5"), "--max-memory", "64KiB"),
                               "below the minimum"),
                              ((os.path.join(self.root, "nope"), "--output", self.output("x.h5")),
                               "is not a directory")):
            proc = ck.tool("nss_consolidate", *args)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(message, proc.stderr)


if __name__ == "__main__":
    unittest.main()
