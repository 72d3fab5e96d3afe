"""scripts/prepare_data_hf.py end to end: a BPE tokenizer trained here with
Hugging Face `tokenizers` on local text (nothing is downloaded) converts text,
JSONL and CSV into the token format; every document decodes back to exactly
the text nss_prepare_data stores for it, and the C++ reader accepts the file.

Runs under the venv scripts/setup.sh creates (NSS_VENV_PYTHON)."""
import json
import os
import stat
import subprocess
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import bpe_tokenizer  # noqa: E402
import nss_e2e  # noqa: E402

VENV_PYTHON = nss_e2e.VENV_PYTHON
SCRIPT = os.path.join(nss_e2e.SOURCE, "scripts", "prepare_data_hf.py")

def split_documents(tokens, bos, eos):
    documents, current = [], []
    for token in tokens.tolist():
        if token == eos:
            documents.append(current[1:] if current and current[0] == bos else current)
            current = []
        else:
            current.append(token)
    return documents


class PrepareDataHfTest(nss_e2e.VenvScratchDirTest):
    SCRATCH_TAG = "hf"

    def train_tokenizer(self):
        os.makedirs(self.path("tok"))
        bpe_tokenizer.train(VENV_PYTHON, self.path("tok/tokenizer.json"), 600, ["<s>", "</s>"])
        return self.path("tok")

    def test_round_trip_matches_nss_prepare_data_documents(self):
        tokenizer = self.train_tokenizer()
        text = self.write("doc.txt", "The GNU General Public License, caf\u00e9 \u2014 unicode.\n\tTabs too.\n".encode())
        jsonl = self.write("rows.jsonl", b'{"text": "Licensed under the Apache License"}\n{"id": 7, "body": "no text key"}\n')
        csv = self.write("table.csv", b'name,score,comment\nAda,9.5,"said ""hi"", left"\nBob,010,\n')
        inputs = ["--input", text, "--input", jsonl, "--input", csv]

        result = self.venv(SCRIPT, "--tokenizer", tokenizer, "--output", self.path("hf.h5"), *inputs)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        reference = subprocess.run([nss_e2e.binary("nss_prepare_data"), "--output", self.path("bytes.h5")] + inputs,
                                   capture_output=True)
        self.assertEqual(reference.returncode, 0, reference.stderr.decode())

        with h5py.File(self.path("hf.h5"), "r") as f:
            tokens = f["tokens"]
            self.assertIsNone(tokens.chunks)
            self.assertEqual(tokens.dtype, np.uint16)
            ids = tokens[...]
            attrs = {k: (v.item() if hasattr(v, "item") else v) for k, v in f.attrs.items()}
        self.assertTrue(attrs["tokenizer"].startswith("hf:"))
        self.assertEqual((attrs["bos_token_id"], attrs["eos_token_id"]), (0, 1))  # "<s>", "</s>"
        self.assertLessEqual(attrs["vocab_size"], 600)
        self.assertEqual(attrs["max_token_id"], int(ids.max()))
        self.assertEqual(attrs["documents"], 5)
        documents = split_documents(ids, attrs["bos_token_id"], attrs["eos_token_id"])
        self.assertEqual(len(documents), 5)

        decoded = bpe_tokenizer.decode(VENV_PYTHON, self.path("tok/tokenizer.json"), documents, self.path("ids.json"))
        with h5py.File(self.path("bytes.h5"), "r") as f:
            byte_tokens = f["tokens"][...]
        byte_documents = [bytes(d).decode() for d in split_documents(byte_tokens, 256, 257)]
        self.assertLess(len(ids), 0.8 * len(byte_tokens), "BPE should need fewer tokens than bytes")
        self.assertEqual(decoded, byte_documents)
        self.assertEqual(byte_documents[4], '{"name":"Bob","score":"010","comment":""}')

        probe = subprocess.run([nss_e2e.binary("token_dataset_probe"), self.path("hf.h5"), "8", "1", str(attrs["vocab_size"])],
                               capture_output=True)
        self.assertEqual(probe.returncode, 0, probe.stderr.decode())
        self.assertEqual(json.loads(probe.stdout)["tokens"], ids.tolist())

    def test_errors(self):
        tokenizer = self.train_tokenizer()
        out = ["--output", self.path("out.h5")]
        ragged = self.venv(SCRIPT, "--tokenizer", tokenizer, "--input", self.write("r.csv", b"a,b\n1\n"), *out)
        self.assertEqual(ragged.returncode, 4)
        self.assertIn(b"r.csv:2: CSV row has 1 fields", ragged.stderr)
        bad_json = self.venv(SCRIPT, "--tokenizer", tokenizer, "--input", self.write("j.jsonl", b"{oops\n"), *out)
        self.assertEqual(bad_json.returncode, 4)
        self.assertIn(b"j.jsonl:1: invalid JSON", bad_json.stderr)
        empty = self.venv(SCRIPT, "--tokenizer", tokenizer, "--input", self.write("e.txt", b""), *out)
        self.assertEqual(empty.returncode, 4)
        no_tokenizer = self.venv(SCRIPT, "--tokenizer", "meta-llama/Llama-3.2-1B", "--input", self.path("e.txt"), *out)
        self.assertEqual(no_tokenizer.returncode, 2)
        self.assertIn(b"nothing is downloaded", no_tokenizer.stderr)
        bad_eos = self.venv(SCRIPT, "--tokenizer", tokenizer, "--eos-token", "<nope>", "--input", self.path("e.txt"), *out)
        self.assertEqual(bad_eos.returncode, 2)
        self.assertFalse(os.path.exists(self.path("out.h5")))

    def test_the_output_rules_of_nss_prepare_data(self):
        tokenizer = self.train_tokenizer()
        text = self.write("t.txt", b"some text\n")
        os.mkdir(self.path("folder"))
        os.mkfifo(self.path("fifo"))
        for output, message in ((self.path("folder"), b"is a directory"), (self.path("fifo"), b"is a FIFO"),
                                (self.path("missing/out.h5"), b"No such file or directory")):
            with self.subTest(output=output):
                proc = self.venv(SCRIPT, "--tokenizer", tokenizer, "--input", text, "--output", output)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(message, proc.stderr)
        self.assertFalse(os.path.exists(self.path("missing")))
        self.assertTrue(stat.S_ISFIFO(os.stat(self.path("fifo")).st_mode))
        existing = self.write("existing.h5", b"old")
        proc = self.venv(SCRIPT, "--tokenizer", tokenizer, "--input", text, "--output", existing)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(existing, "rb") as f:
            self.assertEqual(f.read(4), b"\x89HDF")


if __name__ == "__main__":
    unittest.main()
