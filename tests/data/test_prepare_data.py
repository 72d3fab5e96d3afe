"""nss_prepare_data end to end: text, JSONL and CSV through the real binary,
read back with h5py (Debian's python3-h5py) and with the C++ reader, and every
input error with its exit code."""
import json
import os
import subprocess
import sys
import time
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import nss_e2e  # noqa: E402

BOS, EOS = 256, 257


def run(name, args, timeout=60):
    return subprocess.run([nss_e2e.binary(name)] + list(args), capture_output=True, timeout=timeout)


def decode(tokens):
    """Byte-level documents: the bytes between each BOS and the following EOS."""
    documents, current = [], None
    for token in tokens.tolist():
        if token == BOS:
            current = bytearray()
        elif token == EOS:
            documents.append(bytes(current))
            current = None
        else:
            current.append(token)
    return documents


class PrepareDataTest(nss_e2e.ScratchDirTest):
    SCRATCH_TAG = "prepare"

    def prepare(self, *args):
        result = run("nss_prepare_data", list(args) + ["--output", self.path("out.h5")])
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        return self.path("out.h5")

    def read(self, path):
        with h5py.File(path, "r") as f:
            tokens = f["tokens"]
            self.assertIsNone(tokens.chunks, "tokens must be contiguous")
            self.assertIsNone(tokens.compression)
            self.assertEqual(tokens.dtype, np.uint16)
            self.assertEqual(tokens.ndim, 1)
            attrs = {k: (v.item() if hasattr(v, "item") else v) for k, v in f.attrs.items()}
            return tokens[...], attrs

    def test_round_trip_text_jsonl_csv_read_by_h5py(self):
        text = "Plain text, two lines.\n\xe9t\xe9\n".encode("utf-8") + b"\xff\xfe raw bytes"
        records = [{"text": "a record's text"}, {"prompt": "2+2?", "answer": 4}, {"text": ""}]
        jsonl = "\n".join(json.dumps(r) for r in records).encode() + b"\n\n"
        csv = b"city,population,note\nParis,2102650,\"capital, \"\"big\"\"\"\nNowhere,007,\n"
        tokens, attrs = self.read(self.prepare(
            "--input", self.write("doc.txt", text), "--input", self.write("rows.jsonl", jsonl),
            "--input", self.write("table.csv", csv)))
        expected = [
            text,
            b"a record's text",
            b'{"prompt":"2+2?","answer":4}',
            b"",
            b'{"city":"Paris","population":2102650,"note":"capital, \\"big\\""}',
            b'{"city":"Nowhere","population":"007","note":""}',
        ]
        self.assertEqual(decode(tokens), expected)
        self.assertEqual(attrs["tokenizer"], "byte-level")
        self.assertEqual(attrs["vocab_size"], 258)
        self.assertEqual(attrs["documents"], len(expected))
        self.assertEqual(attrs["max_token_id"], int(tokens.max()))
        self.assertEqual(attrs["bos_token_id"], BOS)
        self.assertEqual(attrs["eos_token_id"], EOS)
        self.assertEqual(len(tokens), sum(len(d) + 2 for d in expected))
        self.assertEqual(os.listdir(self.dir).count("out.h5"), 1)
        self.assertFalse([n for n in os.listdir(self.dir) if ".tmp." in n])

        # The C++ reader sees the same tokens and attributes.
        probe = run("token_dataset_probe", [self.path("out.h5")])
        self.assertEqual(probe.returncode, 0, probe.stderr.decode())
        info = json.loads(probe.stdout)
        self.assertEqual(info["tokens"], tokens.tolist())
        self.assertEqual((info["dtype"], info["tokenizer"], info["documents"]), ("uint16", "byte-level", 6))

    def test_format_flag_overrides_the_extension(self):
        tokens, _ = self.read(self.prepare("--format", "text", "--input", self.write("t.csv", b"a,b\n1,2\n")))
        self.assertEqual(decode(tokens), [b"a,b\n1,2\n"])

    def expect_failure(self, code, args, *fragments):
        result = run("nss_prepare_data", args)
        stderr = result.stderr.decode(errors="replace")
        self.assertEqual(result.returncode, code, stderr)
        for fragment in fragments:
            self.assertIn(fragment, stderr)
        self.assertFalse(os.path.exists(self.path("out.h5")))
        self.assertFalse([n for n in os.listdir(self.dir) if ".tmp." in n])

    def test_input_errors_exit_4_naming_file_and_line(self):
        out = ["--output", self.path("out.h5")]
        self.expect_failure(4, ["--input", self.path("missing.txt")] + out,
                            "nss_prepare_data: error: [data] cannot read input", "missing.txt")
        self.expect_failure(4, ["--input", self.write("empty.txt", b"")] + out, "empty.txt is empty")
        self.expect_failure(4, ["--input", self.dir] + out, "is not a regular file")
        self.expect_failure(4, ["--input", self.write("r.csv", b"a,b\n1,2\n3\n")] + out,
                            "r.csv:3: CSV row has 1 fields, the header has 2")
        self.expect_failure(4, ["--input", self.write("j.jsonl", b'{"text": "ok"}\n{"text": \n')] + out,
                            "j.jsonl:2: invalid JSON")
        os.mkfifo(self.path("fifo.txt"))
        self.expect_failure(4, ["--input", self.path("fifo.txt")] + out, "is not a regular file")

    def test_usage_errors_exit_2(self):
        good = self.write("good.txt", b"text")
        self.expect_failure(2, [], "--input is required")
        self.expect_failure(2, ["--input", good], "--output is required")
        self.expect_failure(2, ["--input", good, "--output", self.path("out.h5"), "--format", "xml"],
                            "unknown input format 'xml'")
        self.expect_failure(2, ["--input", self.write("d.json", b"{}"), "--output", self.path("out.h5")],
                            "pass --format text")
        self.expect_failure(2, ["--input", good, "--output", good], "is also an input")
        self.assertEqual(run("nss_prepare_data", ["--help"]).returncode, 0)


class ReaderErrorsTest(nss_e2e.ScratchDirTest):
    """Files that other tools write wrongly: the C++ reader says what to do (exit 4)."""

    SCRATCH_TAG = "reader"

    def probe(self, path, *needs):
        return run("token_dataset_probe", [path] + [str(n) for n in needs])

    def h5(self, name, **dataset):
        path = self.path(name)
        with h5py.File(path, "w") as f:
            f.create_dataset("tokens", data=np.arange(5000, dtype=np.int32) % 300, **dataset)
        return path

    def test_h5py_files_are_accepted_or_rejected_with_a_fix(self):
        info = json.loads(self.probe(self.h5("plain.h5")).stdout)
        self.assertEqual((info["dtype"], info["num_tokens"], info["max_token_id"]), ("int32", 5000, None))
        for name, options in [("chunked.h5", {"chunks": (100,)}), ("gzip.h5", {"compression": "gzip"})]:
            result = self.probe(self.h5(name, **options))
            self.assertEqual(result.returncode, 4, result.stderr)
            self.assertIn(b"h5repack -l /tokens:CONTI", result.stderr)
            # The fix the message gives works (h5repack is in Debian's hdf5-tools).
            fixed = os.path.join(self.dir, "fixed_" + name)
            subprocess.run(["h5repack", "-l", "/tokens:CONTI", os.path.join(self.dir, name), fixed], check=True)
            repaired = self.probe(fixed)
            self.assertEqual(repaired.returncode, 0, repaired.stderr)
            self.assertEqual(json.loads(repaired.stdout)["tokens"], json.loads(self.probe(self.h5("again.h5")).stdout)["tokens"])
        short = self.probe(self.h5("short.h5"), 128, 64, 300)
        self.assertEqual(short.returncode, 4)
        self.assertIn(b"too short", short.stderr)
        vocab = self.probe(self.h5("vocab.h5"), 16, 8, 258)
        self.assertEqual(vocab.returncode, 4)
        self.assertIn(b"sampled scan", vocab.stderr)
        self.assertEqual(self.probe(self.h5("fits.h5"), 16, 8, 300).returncode, 0)

    def test_fifo_and_missing_file_fail_fast(self):
        fifo = os.path.join(self.dir, "fifo.h5")
        os.mkfifo(fifo)
        start = time.monotonic()
        result = self.probe(fifo)
        self.assertEqual(result.returncode, 4)
        self.assertIn(b"is a FIFO, not a regular file", result.stderr)
        self.assertLess(time.monotonic() - start, 10)
        missing = self.probe(os.path.join(self.dir, "none.h5"))
        self.assertEqual(missing.returncode, 4)
        self.assertIn(b"does not exist", missing.stderr)


if __name__ == "__main__":
    unittest.main()
