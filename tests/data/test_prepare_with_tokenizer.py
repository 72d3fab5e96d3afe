"""nss_prepare_data --tokenizer end to end: for the SmolLM2 tokenizer.json (as
converted and as transformers' save_pretrained writes it again), a
byte-level BPE trained here and the Gemma, Mistral and Qwen2 pipelines
(tests/tokenizer/family_tokenizers.py), every format nss_prepare_data supports (text,
jsonl, csv documents; sft and records examples) gives the file
scripts/prepare_data_hf.py gives for the same inputs and flags, dataset by
dataset and attribute by attribute; bad tokenizer arguments are usage (2) or
data (4) errors.

Runs the Python side under the venv scripts/setup.sh creates (NSS_VENV_PYTHON)."""
import json
import os
import subprocess
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import bpe_tokenizer  # noqa: E402
import nss_e2e  # noqa: E402
import pii_people  # noqa: E402

VENV_PYTHON = nss_e2e.VENV_PYTHON
SCRIPT = os.path.join(nss_e2e.SOURCE, "scripts", "prepare_data_hf.py")
FAMILIES = os.path.join(nss_e2e.SOURCE, "tests", "tokenizer", "family_tokenizers.py")
SMOLLM2 = os.environ.get("NSS_REAL_MODEL", os.path.join(nss_e2e.SOURCE, "build", "models", "smollm2-135m-instruct"))

# Non-ASCII, whitespace runs, digits, and special-token strings inside text.
TEXT = ("The GNU General Public License, caf\u00e9 \u2014 \u00fcber \u65e5\u672c\u8a9e \U0001F600 emoji.\n\n\n"
        "\tTabs\t\ttoo,    spaces   and trailing   \n"
        "digits 1234567 3.14159 2024-11-25 0x1F\n"
        "specials <|endoftext|> <s> </s> <|im_start|>user<|im_end|> <|begin_of_text|>\n"
        "don't won't I'M you'LL  \r\n end").encode()
JSONL = ('{"text": "Licensed under the Apache License \u00e9\u00e8 42"}\n'
         '{"id": 7, "body": "no text key", "nested": {"x": [1, 2.5, null, true]}}\n'
         '{"text": "  leading spaces and <|im_end|> inside"}\n').encode()
CSV = b'name,score,comment\nAda,9.5,"said ""hi"", left"\nBob,010,\nZo\xc3\xab,-3,"multi\nline"\n'
SFT = ('{"prompt": "Hi", "completion": " there friend, how are you doing today?"}\n'
       '{"prompt": "Translate to French: cheese\\n", "completion": "fromage \u00e9"}\n'
       '{"prompt": "Sum 12 + 30 =", "completion": " 42"}\n'
       '{"prompt": "Say <|im_end|> literally: ", "completion": "<|im_end|> </s>"}\n').encode()
# zip: text cells of digits alone (leading zeros) or a missing-value spelling, and a number.
RECORDS = (b"patient,visit,value,zip\np1,10,high,06647\np2,1,low,10009\np1,9,mid \xc3\xa9,NA\n"
           b"p2,2,\"a, b\",00012\n")


def attributes(f):
    """Root attributes with their Python types, so an int and a string differ."""
    return {k: (type(v).__name__, v.item() if hasattr(v, "item") else v) for k, v in f.attrs.items()}


class PrepareWithTokenizerTest(nss_e2e.VenvScratchDirTest):
    SCRATCH_TAG = "hftok"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not os.path.isfile(os.path.join(SMOLLM2, "tokenizer.json")):
            raise AssertionError("no tokenizer.json at %s: run scripts/setup.sh (it fetches SmolLM2)" % SMOLLM2)
        cls.bpe_dir = nss_e2e.scratch("hftok_bpe")
        bpe_tokenizer.train(VENV_PYTHON, os.path.join(cls.bpe_dir, "tokenizer.json"), 600, ["<s>", "</s>"])
        cls.resaved = os.path.join(cls.bpe_dir, "smollm2_resaved")
        training_text = os.path.join(cls.bpe_dir, "families.txt")
        with open(training_text, "wb") as f:
            with open("/usr/share/common-licenses/GPL-3", "rb") as licence:
                f.write(TEXT * 20 + JSONL * 20 + CSV * 20 + licence.read())
        for args in (["resave", SMOLLM2, cls.resaved], ["families", os.path.join(cls.bpe_dir, "families"),
                                                         training_text]):
            made = subprocess.run([VENV_PYTHON, FAMILIES] + args, capture_output=True, timeout=300)
            assert made.returncode == 0, made.stderr.decode()
        cls.families = [os.path.join(cls.bpe_dir, "families", name) for name in ("gemma", "mistral", "qwen2")]

    @classmethod
    def tearDownClass(cls):
        nss_e2e.remove(cls.bpe_dir)

    def nss(self, *args):
        return subprocess.run([nss_e2e.binary("nss_prepare_data")] + list(args), capture_output=True, timeout=240)

    def inputs(self):
        return {"text": self.write("doc.txt", TEXT), "bad_utf8": self.write("bad.txt", b"ok \xff\xfe caf\xc3 end\n"),
                "jsonl": self.write("rows.jsonl", JSONL), "csv": self.write("table.csv", CSV),
                "sft": self.write("sft.jsonl", SFT), "records": self.write("records.csv", RECORDS)}

    def assert_same_as_python(self, tokenizer, *args):
        """Runs both with `args` and checks the two files are identical."""
        cpp, py = self.path("cpp.h5"), self.path("py.h5")
        for path in (cpp, py):
            if os.path.exists(path):
                os.remove(path)
        ours = self.nss("--tokenizer", tokenizer, "--output", cpp, *args)
        self.assertEqual(ours.returncode, 0, ours.stderr.decode())
        theirs = self.venv(SCRIPT, "--tokenizer", tokenizer, "--output", py, *args)
        self.assertEqual(theirs.returncode, 0, theirs.stderr.decode())
        with h5py.File(cpp, "r") as a, h5py.File(py, "r") as b:
            self.assertEqual(sorted(a.keys()), sorted(b.keys()), args)
            for name in b.keys():
                self.assertEqual(a[name].dtype, b[name].dtype, (name, args))
                self.assertEqual(a[name].chunks, b[name].chunks, (name, args))
                np.testing.assert_array_equal(a[name][...], b[name][...], err_msg="%s %s" % (name, args))
            self.assertEqual(attributes(a), attributes(b), args)
            return attributes(a)

    def test_holdout_matches_prepare_data_hf(self):
        rows = ["patient,visit,value"]
        for r in range(300):  # 30 patients; rows 150 apart repeat
            rows.append("p%d,%d,%s" % (r % 30, r % 150, ["high", "low", "mid \u00e9", '"a, b"', '"x\ny"'][r % 5]))
        table = self.write("holdout_table.csv", ("\n".join(rows) + "\n").encode())
        runs = [["--holdout", "0.1"], ["--holdout", "37", "--group-by", "patient", "--holdout-seed", "5",
                                       "--holdout-eval"], ["--holdout", "0.02", "--holdout-seed", "9"]]
        for args in runs:
            with self.subTest(args=args):
                outputs = {}
                for side, output in (("cpp", self.path("cpp.h5")), ("py", self.path("py.h5"))):
                    command = ["--tokenizer", SMOLLM2, "--output", output, "--input", table, "--format", "records",
                               "--pii", "off"]
                    proc = self.nss(*command, *args) if side == "cpp" else self.venv(SCRIPT, *command, *args)
                    self.assertEqual(proc.returncode, 0, proc.stderr.decode())
                    outputs[side] = (output, proc.stdout.decode(), proc.stderr.decode())
                (cpp, cpp_out, cpp_err), (py, py_out, _) = outputs["cpp"], outputs["py"]
                if args[1] == "0.02":  # 6 rows: a warning and no holdout on both sides
                    self.assertIn("is 6 rows, fewer than 10: no holdout", cpp_err)
                    self.assertNotIn("held out", cpp_out + py_out)
                    with h5py.File(cpp, "r") as f:
                        self.assertNotIn("holdout_table", f.attrs)
                    continue
                summaries = [[line.split(" in ")[0] for line in out.splitlines() if line.startswith("held out")]
                             for out in (cpp_out, py_out)]
                self.assertEqual(summaries[0], summaries[1])
                self.assertEqual(len(summaries[0]), 1, cpp_out)
                held = [p[:-3] + ".holdout.csv" for p in (cpp, py)]
                self.assertEqual(*[open(p, "rb").read() for p in held])
                for path in held:
                    self.assertEqual(os.stat(path).st_mode & 0o777, 0o600, path)
                files = [(cpp, py)] + ([(cpp[:-3] + ".holdout.h5", py[:-3] + ".holdout.h5")] if "--holdout-eval" in args
                                       else [])
                for a_path, b_path in files:
                    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
                        for name in b.keys():
                            np.testing.assert_array_equal(a[name][...], b[name][...], err_msg=name)
                        ours, theirs = attributes(a), attributes(b)
                        self.assertEqual(ours.pop("holdout_table"), ("str", held[0]))
                        self.assertEqual(theirs.pop("holdout_table"), ("str", held[1]))
                        self.assertEqual(ours, theirs)

    def test_pii_is_nss_prepare_data_pass(self):
        """prepare_data_hf.py's PII handling (on by default for records) is
        nss_prepare_data's: the same key gives the same files, paths aside."""
        table = self.path("people.csv")
        pii_people.write_people(table, 100)  # 200 rows: the least a holdout is taken from
        key = self.path("shared.key")
        paths = ["holdout_table", "pii_report", "training_table"]  # beside each output
        outputs = {}
        for side, output in (("cpp", self.path("cpp.h5")), ("py", self.path("py.h5"))):
            command = ["--tokenizer", SMOLLM2, "--output", output, "--input", table, "--format", "records",
                       "--holdout", "0.25", "--pii-key", key, "--pii-entities", "all", "--holdout-eval"]
            proc = self.nss(*command) if side == "cpp" else self.venv(SCRIPT, *command)
            self.assertEqual(proc.returncode, 0, proc.stderr.decode())
            self.assertIn("PII (replace): columns customer (name)", proc.stdout.decode())
            outputs[side] = output[:-3]
        for suffix in (".h5", ".holdout.h5"):
            with h5py.File(outputs["cpp"] + suffix, "r") as a, h5py.File(outputs["py"] + suffix, "r") as b:
                for name in b.keys():
                    np.testing.assert_array_equal(a[name][...], b[name][...], err_msg=name)
                ours, theirs = attributes(a), attributes(b)
                for name in paths + ["pii_report_sha256"]:  # the report holds its own timing
                    ours.pop(name)
                    theirs.pop(name)
                self.assertEqual(ours, theirs)
        for suffix in (".training.csv", ".holdout.csv"):
            self.assertEqual(*[open(outputs[side] + suffix, "rb").read() for side in ("cpp", "py")])
        reports = [json.load(open(outputs[side] + ".pii.json")) for side in ("cpp", "py")]
        for report in reports:
            report.pop("pii_replacer_time_sec")
        self.assertEqual(*reports)

    def test_every_format_matches_prepare_data_hf(self):
        files = self.inputs()
        big = self.write("big.txt", (TEXT.decode() + " %d\n" % 7).encode() * 400)
        smollm2_json = os.path.join(SMOLLM2, "tokenizer.json")
        runs = [
            ["--input", files["text"]],
            ["--input", files["bad_utf8"], "--input", big],
            ["--input", files["jsonl"]],
            ["--input", files["csv"]],
            ["--input", files["text"], "--input", files["jsonl"], "--input", files["csv"]],
            ["--input", files["sft"], "--format", "sft"],
            ["--input", files["sft"], "--format", "sft", "--max-tokens", "6"],
            ["--input", files["records"], "--format", "records", "--pii", "off"],
            ["--input", files["records"], "--format", "records", "--group-by", "patient", "--order-by", "visit",
             "--pii", "off"],
        ]
        for tokenizer in (SMOLLM2, smollm2_json, self.bpe_dir, self.resaved):
            for args in runs:
                with self.subTest(tokenizer=tokenizer, args=args):
                    self.assert_same_as_python(tokenizer, *args)
        with self.subTest("records: digit strings"):
            attrs = self.assert_same_as_python(SMOLLM2, *runs[7])
            columns = {c["name"]: c for c in json.loads(attrs["records_schema"][1])["columns"]}
            self.assertEqual({name: c["digit_strings"] for name, c in columns.items()},
                             {"patient": False, "visit": False, "value": False, "zip": True})
            self.assertEqual((columns["zip"]["type"], columns["zip"]["max_chars"]), ("string", 5))
            self.assertEqual({name: c["missing_values"] for name, c in columns.items()},
                             {"patient": [], "visit": [], "value": [], "zip": ["NA"]})
        for tokenizer in self.families:
            for args in runs[:2] + runs[5:6]:
                with self.subTest(tokenizer=tokenizer, args=args):
                    self.assert_same_as_python(tokenizer, *args)
        with self.subTest("SmolLM2: tokenizer_config.json's BOS/EOS, uint16"):
            attrs = self.assert_same_as_python(SMOLLM2, "--input", files["text"])
            self.assertEqual(attrs["tokenizer"], ("str", "hf:" + smollm2_json))
            self.assertEqual((attrs["bos_token_id"][1], attrs["eos_token_id"][1], attrs["vocab_size"][1]),
                             (1, 2, 49152))
        with self.subTest("flags override; no BOS"):
            attrs = self.assert_same_as_python(SMOLLM2, "--input", files["sft"], "--format", "sft", "--bos-token",
                                               "none", "--eos-token", "<|endoftext|>")
            self.assertNotIn("bos_token_id", attrs)
            self.assertEqual(attrs["eos_token_id"][1], 0)
        with self.subTest("BPE without tokenizer_config.json: well-known <s> and </s>"):
            attrs = self.assert_same_as_python(self.bpe_dir + "/", "--input", files["csv"])
            self.assertEqual((attrs["bos_token_id"][1], attrs["eos_token_id"][1]), (0, 1))

    def test_without_tokenizer_stays_byte_level(self):
        result = self.nss("--input", self.inputs()["text"], "--output", self.path("bytes.h5"))
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        with h5py.File(self.path("bytes.h5"), "r") as f:
            self.assertEqual(f.attrs["tokenizer"], "byte-level")
            self.assertEqual(f["tokens"].shape[0], len(TEXT) + 2)

    def test_bad_tokenizer_arguments(self):
        text = self.inputs()["text"]
        os.makedirs(self.path("empty_dir"))
        malformed = self.write("malformed.json", b'{"model": {"type": "BPE", "vocab": ')
        cases = [
            ("missing path", ["--tokenizer", self.path("nowhere")], 2, "no tokenizer.json at"),
            ("directory without tokenizer.json", ["--tokenizer", self.path("empty_dir")], 2, "no tokenizer.json at"),
            ("malformed tokenizer.json", ["--tokenizer", malformed], 4, "malformed.json"),
            ("EOS not in the vocabulary", ["--tokenizer", SMOLLM2, "--eos-token", "<|no such token|>"], 2,
             "<|no such token|>"),
            ("BOS not in the vocabulary", ["--tokenizer", self.bpe_dir, "--bos-token", "<bos>"], 2, "<bos>"),
            ("--bos-token without --tokenizer", ["--bos-token", "<s>"], 2, "--tokenizer"),
            ("chat stays in Python", ["--tokenizer", SMOLLM2, "--format", "chat"], 2, "prepare_data_hf.py"),
        ]
        for name, args, code, message in cases:
            with self.subTest(name):
                result = self.nss("--input", text, "--output", self.path("out.h5"), *args)
                self.assertEqual(result.returncode, code, result.stderr.decode())
                self.assertIn(message, result.stderr.decode())
                self.assertFalse(os.path.exists(self.path("out.h5")))


if __name__ == "__main__":
    unittest.main()
