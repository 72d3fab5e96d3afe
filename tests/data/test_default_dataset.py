"""scripts/prepare_default_data.sh: the default dataset configs/run.yaml
trains on is built from local text, is large enough, deterministic, readable
by h5py and the C++ reader, and long enough for the default run's batches."""
import hashlib
import os
import subprocess
import sys
import unittest

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import nss_e2e  # noqa: E402

SCRIPT = os.path.join(nss_e2e.SOURCE, "scripts", "prepare_default_data.sh")


class DefaultDatasetTest(unittest.TestCase):
    def setUp(self):
        self.dir = nss_e2e.scratch("default_data")

    def tearDown(self):
        nss_e2e.remove(self.dir)

    def build(self, name):
        out = os.path.join(self.dir, name)
        result = subprocess.run([SCRIPT, out], capture_output=True, timeout=240,
                                env=dict(os.environ, NSS_BIN_DIR=nss_e2e.BIN))
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        digests = {}
        for split in ("train", "val"):
            with h5py.File(os.path.join(out, split + ".h5"), "r") as f:
                tokens = f["tokens"][...]
                digests[split] = hashlib.sha256(tokens.tobytes()).hexdigest()
                digests[split + "_tokens"] = len(tokens)
                digests[split + "_documents"] = int(f.attrs["documents"])
        return out, digests

    def test_deterministic_large_enough_and_idempotent(self):
        first, a = self.build("a")
        _, b = self.build("b")
        self.assertEqual(a, b)
        self.assertGreater(a["train_tokens"], 1_000_000)
        self.assertGreater(a["val_tokens"], 50_000)
        self.assertGreater(a["train_documents"], 5 * a["val_documents"])
        # Long enough for the default run: seq_len 128, global batch 8, vocab 258.
        for split in ("train", "val"):
            probe = subprocess.run([nss_e2e.binary("token_dataset_probe"), os.path.join(first, split + ".h5"),
                                    "128", "8", "258"], capture_output=True)
            self.assertEqual(probe.returncode, 0, probe.stderr.decode())
        before = os.stat(os.path.join(first, "train.h5")).st_mtime_ns
        again = subprocess.run([SCRIPT, first], capture_output=True, env=dict(os.environ, NSS_BIN_DIR=nss_e2e.BIN))
        self.assertEqual(again.returncode, 0)
        self.assertEqual(os.stat(os.path.join(first, "train.h5")).st_mtime_ns, before, "an existing dataset was rebuilt")


if __name__ == "__main__":
    unittest.main()
