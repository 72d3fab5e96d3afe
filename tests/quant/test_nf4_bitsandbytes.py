"""lib/quant against bitsandbytes itself: quantize_4bit / dequantize_4bit
(quant_type="nf4", blocksize=64, compress_statistics False and True) on the CPU,
from PyPI in build/bnb-venv (scripts/setup_bnb_venv.sh; skipped without it).
For several tensors of odd lengths, nf4_probe's packed bytes, absmax, nested
state (codes, group absmax) and dequantised values must equal bitsandbytes'
bit for bit; the double-quantisation offset within 2 ulp (see REFERENCE)."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, binary  # noqa: E402

BNB_PYTHON = os.environ.get("NSS_BNB_PYTHON", os.path.join(SOURCE, "build", "bnb-venv", "bin", "python"))

# bitsandbytes' offset is torch's fp32 mean(), ours an fp64 sum in block order
# (the same at any world size), so the two may differ in the last bits: the
# reference checks that they agree within 2 ulp and then runs bitsandbytes'
# own nested step (quantize_blockwise(absmax - offset, blocksize=256), exactly
# what quantize_4bit does) and dequantize_4bit with our offset. Both
# quantisations run before any dequantisation: in bitsandbytes 0.50.2 a
# quantize_4bit after the first CPU dequantize_4bit codes an all-zero block as
# 0xFF instead of 0x77 (both decode to 0, the block's absmax being 0).
REFERENCE = r"""
import sys
import numpy as np
import torch
import bitsandbytes.functional as F
src, prefix, our_offset_path = sys.argv[1:4]
x = torch.from_numpy(np.fromfile(src, dtype=np.float32))
packed, state = F.quantize_4bit(x, blocksize=64, quant_type="nf4", compress_statistics=False)
packed.numpy().tofile(prefix + ".packed")
state.absmax.numpy().tofile(prefix + ".absmax")
packed2, state2 = F.quantize_4bit(x, blocksize=64, quant_type="nf4", compress_statistics=True)
assert torch.equal(packed, packed2)
F.dequantize_4bit(packed, state).numpy().tofile(prefix + ".deq")
ours = np.fromfile(our_offset_path, dtype=np.float32)[0]
theirs = np.float32(state2.offset.item())
ulps = abs(int(np.array(ours).view(np.int32)) - int(np.array(theirs).view(np.int32)))
print("offset", ours, "bitsandbytes", theirs, "ulp", ulps, file=sys.stderr)
assert ulps <= 2, (ours, theirs)
state2.offset = torch.tensor(ours)
state2.absmax, state2.state2 = F.quantize_blockwise(state.absmax - state2.offset, blocksize=256)
state2.absmax.numpy().tofile(prefix + ".dq_codes")
state2.state2.absmax.numpy().tofile(prefix + ".dq_groups")
np.array([state2.offset.item()], dtype=np.float32).tofile(prefix + ".dq_offset")
F.dequantize_4bit(packed2, state2).numpy().tofile(prefix + ".dq_deq")
F.create_dynamic_map(signed=True).numpy().tofile(prefix + ".map")
"""

FILES = {"packed": np.uint8, "absmax": np.float32, "deq": np.float32, "dq_codes": np.uint8,
         "dq_groups": np.float32, "dq_offset": np.float32, "dq_deq": np.float32}


def tensors():
    rng = np.random.default_rng(17)
    yield "tiny", rng.normal(0, 0.02, 1)
    yield "short_block", rng.normal(0, 0.02, 63)
    yield "odd", rng.normal(0, 0.05, 64 * 7 + 33)
    yield "zeros_and_constant", np.concatenate([np.zeros(64), np.full(64, -0.5), rng.normal(0, 1, 11)])
    yield "heavy_tail", rng.standard_t(3, 64 * 300 + 5) * 0.01
    yield "many_groups", rng.normal(0, 0.02, 64 * 256 * 3 + 129)


class Nf4BitsandbytesParityTest(unittest.TestCase):
    def test_probe_equals_bitsandbytes(self):
        usable = os.path.exists(BNB_PYTHON) and subprocess.run(
            [BNB_PYTHON, "-c", "import bitsandbytes, numpy"], capture_output=True).returncode == 0
        if not usable:
            raise unittest.SkipTest("no bitsandbytes venv at %s: run scripts/setup_bnb_venv.sh "
                                    "(about 4.5 GB: PyPI's torch wheel bundles CUDA)" % BNB_PYTHON)
        with tempfile.TemporaryDirectory() as tmp:
            for name, values in tensors():
                with self.subTest(tensor=name, elements=len(values)):
                    src = os.path.join(tmp, name + ".f32")
                    values.astype(np.float32).tofile(src)
                    ours, ref = os.path.join(tmp, name + ".ours"), os.path.join(tmp, name + ".bnb")
                    subprocess.run([binary("nf4_probe"), src, ours], check=True)
                    subprocess.run([BNB_PYTHON, "-c", REFERENCE, src, ref, ours + ".dq_offset"],
                                   check=True)
                    got = {k: np.fromfile(ours + "." + k, dtype=t) for k, t in FILES.items()}
                    want = {k: np.fromfile(ref + "." + k, dtype=t) for k, t in FILES.items()}
                    near = self.check_nearer_codes(got, want, np.fromfile(ref + ".map", np.float32))
                    for suffix in FILES:
                        a, b = got[suffix], want[suffix]
                        if suffix == "dq_codes" or (suffix == "dq_deq" and near.any()):
                            continue
                        self.assertEqual(a.shape, b.shape, suffix)
                        diff = np.flatnonzero(a.view(np.uint8) != b.view(np.uint8))
                        self.assertEqual(diff.size, 0, "%s differs at byte %s" % (suffix, diff[:5]))
                    x = values.astype(np.float32)
                    deq = np.fromfile(ours + ".deq", dtype=np.float32)
                    absmax = np.fromfile(ours + ".absmax", dtype=np.float32)
                    # Half the widest gap between NF4 levels (-1 .. -0.6962).
                    bound = np.repeat(absmax, 64)[: len(x)] * 0.15190361 * 1.0001 + 1e-7
                    self.assertTrue(np.all(np.abs(deq - x) <= bound), "round trip above the NF4 bound")

    def check_nearer_codes(self, got, want, dynamic_map):
        """bitsandbytes' CPU 8-bit quantiser (cquantize_blockwise_cpu_fp32, an
        approximate binary search) can return the entry below the nearest one
        for values near 0; ours always takes the nearest. Every differing code
        must be one step above bitsandbytes' and strictly nearer. Returns the
        mask of those blocks (whose dequantised values then differ too)."""
        a, b = got["dq_codes"], want["dq_codes"]
        self.assertEqual(a.shape, b.shape)
        near = a != b
        if near.any():
            centred = got["absmax"] - got["dq_offset"][0]
            v = (centred / np.repeat(got["dq_groups"], 256)[: len(centred)])[near]
            self.assertTrue(np.all(a[near].astype(int) - b[near] == 1), "codes more than one apart")
            self.assertTrue(np.all(np.abs(v - dynamic_map[a[near]]) < np.abs(v - dynamic_map[b[near]])),
                            "a differing code is not nearer than bitsandbytes'")
            print("%d of %d nested codes one step nearer than bitsandbytes'" % (near.sum(), a.size))
        return near


if __name__ == "__main__":
    unittest.main()
