"""Instruction and record data end to end (docs/data.md, "Instruction and
record data"): nss_prepare_data and scripts/prepare_data_hf.py make sft and
records examples with /loss_mask and /document_offsets that mark exactly the
completion and its EOS as targets; both tools produce the same prompts and
completions; records group, order and describe their schema; chat masks come
from a real chat template (SmolLM2's ChatML template) and match what
transformers renders; every mistake is the documented exit code, named."""
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

VENV_PYTHON = nss_e2e.VENV_PYTHON
SCRIPT = os.path.join(nss_e2e.SOURCE, "scripts", "prepare_data_hf.py")

# SmolLM2-135M-Instruct's chat template, as published in its tokenizer_config.json.
CHATML_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")

TRANSFORMERS_CHAT = r"""
import json, sys
try:
    from transformers import AutoTokenizer
except ImportError:
    print("null"); sys.exit(0)
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
print(json.dumps([tokenizer.apply_chat_template(c, tokenize=True) for c in json.load(open(sys.argv[2]))]))
"""

SFT = [
    {"prompt": "Q: capital of France?\nA: ", "completion": "Paris"},
    {"prompt": "Translate 'caf\u00e9' \u2014 ", "completion": "coffee shop \u2615"},
    {"prompt": "", "completion": "an answer with no prompt"},
]

TABLE = ("patient,visit,value,note\n"
         "p2,10,1.5,late\n"
         "p1,2,3,\n"
         "p2,9,-0.5,\"has, comma\"\n"
         "p1,1,4e2,first\n")


def read(path):
    with h5py.File(path, "r") as f:
        attrs = {k: (v.item() if hasattr(v, "item") else v) for k, v in f.attrs.items()}
        data = {name: f[name][...] for name in f}
        layouts = {name: f[name].chunks for name in f}
    return data, attrs, layouts


def split(data):
    """(tokens, mask) per document."""
    offsets = data["document_offsets"]
    mask = data.get("loss_mask", np.ones_like(data["tokens"], dtype=np.uint8))
    return [(data["tokens"][a:b], mask[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]


class InstructionDataTest(nss_e2e.ScratchDirTest):
    SCRATCH_TAG = "sft"

    def prepare(self, *args):
        return subprocess.run([nss_e2e.binary("nss_prepare_data")] + list(args), capture_output=True, timeout=120)

    def venv(self, *args):
        return subprocess.run([VENV_PYTHON] + list(args), capture_output=True, timeout=240)

    def sft_file(self):
        return self.write("train.jsonl", "".join(json.dumps(r) + "\n" for r in SFT).encode())

    def test_sft_masks_the_prompt_byte_level(self):
        result = self.prepare("--input", self.sft_file(), "--output", self.path("sft.h5"), "--format", "sft")
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertIn(b"3 documents", result.stdout)
        self.assertIn(b"0 examples dropped", result.stdout)
        data, attrs, layouts = read(self.path("sft.h5"))
        self.assertEqual(set(layouts.values()), {None})  # all contiguous
        self.assertEqual(data["loss_mask"].dtype, np.uint8)
        self.assertEqual((attrs["format"], attrs["documents"], attrs["dropped_examples"]), ("sft", 3, 0))
        for (tokens, mask), record in zip(split(data), SFT):
            prompt, completion = record["prompt"].encode(), record["completion"].encode()
            self.assertEqual(tokens.tolist(), [256] + list(prompt) + list(completion) + [257])
            self.assertEqual(mask.tolist(), [0] * (1 + len(prompt)) + [1] * (len(completion) + 1))
        probe = subprocess.run([nss_e2e.binary("token_dataset_probe"), self.path("sft.h5")], capture_output=True)
        self.assertEqual(probe.returncode, 0, probe.stderr.decode())
        seen = json.loads(probe.stdout)
        self.assertTrue(seen["has_loss_mask"])
        self.assertEqual(seen["loss_mask"], data["loss_mask"].tolist())
        self.assertEqual(seen["document_offsets"], data["document_offsets"].tolist())
        self.assertEqual(seen["format"], "sft")

    def test_plain_documents_get_offsets_and_no_mask(self):
        result = self.prepare("--input", self.write("a.txt", b"hello"), "--input", self.write("b.txt", b"hi"),
                              "--output", self.path("docs.h5"))
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        data, attrs, _ = read(self.path("docs.h5"))
        self.assertNotIn("loss_mask", data)
        self.assertEqual(data["document_offsets"].tolist(), [0, 7, 11])
        self.assertEqual(attrs["format"], "text")

    def test_max_tokens_drops_examples_without_an_answer(self):
        long_prompt = {"prompt": "x" * 40, "completion": "y"}
        path = self.write("m.jsonl", (json.dumps(SFT[0]) + "\n" + json.dumps(long_prompt) + "\n").encode())
        result = self.prepare("--input", path, "--output", self.path("m.h5"), "--format", "sft", "--max-tokens", "30")
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertIn(b"1 examples dropped", result.stdout)
        data, attrs, _ = read(self.path("m.h5"))
        self.assertEqual((attrs["documents"], attrs["dropped_examples"]), (1, 1))
        self.assertEqual(len(data["tokens"]), 30)  # BOS + 25 prompt + 5 answer + EOS = 32, cut to 30
        self.assertEqual(int(data["loss_mask"].sum()), 4)  # "Pari"

    def test_records_grouped_ordered_with_schema(self):
        table = self.write("table.csv", TABLE.encode())
        result = self.prepare("--input", table, "--output", self.path("r.h5"), "--format", "records",
                              "--group-by", "patient", "--order-by", "visit")
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        data, attrs, _ = read(self.path("r.h5"))
        self.assertEqual((attrs["format"], attrs["group_by"], attrs["order_by"]), ("records", "patient", "visit"))
        schema = json.loads(attrs["records_schema"])["columns"]
        self.assertEqual([(c["name"], c["type"], c["empty_cells"]) for c in schema],
                         [("patient", "string", False), ("visit", "number", False), ("value", "number", False),
                          ("note", "string", True)])
        prompt = ("Generate the records of one patient group as JSON objects, one per line, with the fields "
                  "patient, visit, value, note.\n")
        expected = [  # groups in order of first appearance, rows by visit numerically (9 before 10)
            '{"patient":"p2","visit":9,"value":-0.5,"note":"has, comma"}\n'
            '{"patient":"p2","visit":10,"value":1.5,"note":"late"}',
            '{"patient":"p1","visit":1,"value":4e2,"note":"first"}\n'
            '{"patient":"p1","visit":2,"value":3,"note":""}']
        documents = split(data)
        self.assertEqual(len(documents), 2)
        for (tokens, mask), completion in zip(documents, expected):
            self.assertEqual(bytes(tokens[1:][mask[1:] == 0].tolist()).decode(), prompt)
            self.assertEqual(bytes(tokens[mask == 1][:-1].tolist()).decode(), completion)
            self.assertEqual(tokens[-1], 257)

        custom = self.prepare("--input", table, "--output", self.path("c.h5"), "--format", "records",
                              "--prompt-template", "{{table}} of {columns}: ")
        self.assertEqual(custom.returncode, 0, custom.stderr.decode())
        data, attrs, _ = read(self.path("c.h5"))
        self.assertEqual(attrs["prompt_template"], "{{table}} of {columns}: ")
        tokens, mask = split(data)[0]
        self.assertEqual(bytes(tokens[1:][mask[1:] == 0].tolist()).decode(), "{table} of patient, visit, value, note: ")
        self.assertEqual(attrs["documents"], 4)

    def test_mistakes_are_named(self):
        table = self.write("table.csv", TABLE.encode())
        out = ["--output", self.path("bad.h5")]
        cases = [
            (["--input", table, "--format", "records", "--group-by", "ward"], 2, b"choose one of: patient, visit"),
            (["--input", table, "--format", "records", "--order-by", "visit"], 2, b"without --group-by"),
            (["--input", table, "--format", "records", "--prompt-template", "{rows}"], 2, b"unknown placeholder '{rows}'"),
            (["--input", table, "--format", "records", "--prompt-template", "a } b"], 2, b"unmatched '}'"),
            (["--input", table, "--input", table, "--format", "records"], 2, b"one CSV table"),
            (["--input", self.sft_file(), "--format", "chat"], 2, b"prepare_data_hf.py"),
            (["--input", self.sft_file(), "--max-tokens", "8"], 2, b"applies to examples"),
            (["--input", self.sft_file(), "--format", "sft", "--max-tokens", "-1"], 2,
             b"--max-tokens: Value -1 not in range 1 to 1048577"),
            (["--input", table, "--group-by", "patient"], 2, b"apply to --format records"),
            (["--input", self.write("q.jsonl", b'{"prompt": "q"}\n'), "--format", "sft"], 4,
             b'q.jsonl:1: an sft record needs a string "completion"'),
            (["--input", self.write("n.jsonl", b'{"prompt": "q", "completion": 7}\n'), "--format", "sft"], 4,
             b'n.jsonl:1: an sft record needs a string "completion"'),
            (["--input", self.write("p.jsonl", json.dumps({"prompt": "x" * 9, "completion": "y"}).encode() + b"\n"),
              "--format", "sft", "--max-tokens", "4"], 4, b"no example keeps a target token"),
        ]
        for args, code, message in cases:
            with self.subTest(args=args):
                result = self.prepare(*(args + out))
                self.assertEqual(result.returncode, code, result.stderr.decode())
                self.assertIn(message, result.stderr)
                self.assertFalse(os.path.exists(self.path("bad.h5")))


class HfInstructionDataTest(nss_e2e.VenvScratchDirTest):
    SCRATCH_TAG = "sfthf"

    def tokenizer(self):
        os.makedirs(self.path("tok"))
        bpe_tokenizer.train(VENV_PYTHON, self.path("tok/tokenizer.json"), 700,
                            ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
        config = {"bos_token": None, "eos_token": "<|im_end|>", "chat_template": CHATML_TEMPLATE,
                  "tokenizer_class": "PreTrainedTokenizerFast"}
        self.write("tok/tokenizer_config.json", json.dumps(config).encode())
        return self.path("tok")

    def decode(self, documents):
        return bpe_tokenizer.decode(VENV_PYTHON, self.path("tok/tokenizer.json"), documents, self.path("ids.json"))

    def prompts_and_completions(self, path, hf):
        """(prompt text, completion text) per document, cut where the mask turns on."""
        data, attrs, _ = read(path)
        pieces = []
        for tokens, mask in split(data):
            head = tokens[mask == 0].tolist()
            pieces += [head if hf else head[1:], tokens[mask == 1][:-1].tolist()]  # byte-level: no BOS
        texts = self.decode(pieces) if hf else [bytes(p).decode() for p in pieces]
        return list(zip(texts[0::2], texts[1::2])), attrs

    def test_same_examples_as_nss_prepare_data(self):
        tok = self.tokenizer()
        table = self.write("table.csv", TABLE.encode())
        sft = self.write("train.jsonl", "".join(json.dumps(r) + "\n" for r in SFT).encode())
        for args in (["--input", sft, "--format", "sft"],
                     ["--input", table, "--format", "records", "--group-by", "patient", "--order-by", "visit"],
                     ["--input", table, "--format", "records", "--prompt-template", "rows of {columns}:\n"]):
            with self.subTest(args=args):
                hf = self.venv(SCRIPT, "--tokenizer", tok, "--output", self.path("hf.h5"), *args)
                self.assertEqual(hf.returncode, 0, hf.stderr.decode())
                byte = subprocess.run([nss_e2e.binary("nss_prepare_data"), "--output", self.path("b.h5")] + args,
                                      capture_output=True)
                self.assertEqual(byte.returncode, 0, byte.stderr.decode())
                hf_examples, hf_attrs = self.prompts_and_completions(self.path("hf.h5"), hf=True)
                byte_examples, byte_attrs = self.prompts_and_completions(self.path("b.h5"), hf=False)
                self.assertEqual(hf_examples, byte_examples)
                for key in ("format", "prompt_template", "group_by", "order_by", "records_schema", "documents"):
                    self.assertEqual(hf_attrs.get(key), byte_attrs.get(key), key)
                self.assertIn("tokenizer_sha256", hf_attrs)

    def test_chat_masks_the_assistant_turns(self):
        tok = self.tokenizer()
        conversations = [
            [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4, of course."}],
            [{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "Hello"},
             {"role": "assistant", "content": "Bonjour"}, {"role": "user", "content": "Thanks"},
             {"role": "assistant", "content": "De rien \u2014 merci"}],
            [{"role": "user", "content": "no answer here"}],
        ]
        chat = self.write("chat.jsonl", "".join(json.dumps({"messages": c}) + "\n" for c in conversations).encode())
        result = self.venv(SCRIPT, "--tokenizer", tok, "--output", self.path("chat.h5"), "--input", chat,
                           "--format", "chat")
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertIn(b"1 examples dropped", result.stdout)
        data, attrs, _ = read(self.path("chat.h5"))
        self.assertEqual((attrs["format"], attrs["documents"], attrs["dropped_examples"]), ("chat", 2, 1))
        documents = split(data)
        spans = []
        for tokens, mask in documents:  # each run of targets separately
            edges = np.flatnonzero(np.diff(np.concatenate([[0], mask, [0]])))
            spans.append([tokens[a:b].tolist() for a, b in zip(edges[0::2], edges[1::2])])
        decoded = self.decode([s for doc in spans for s in doc])
        self.assertEqual(decoded, ["4, of course.<|im_end|>\n", "Bonjour<|im_end|>\n",
                                   "De rien \u2014 merci<|im_end|>\n"])
        whole = self.decode([tokens.tolist() for tokens, _ in documents])
        self.assertTrue(whole[0].startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM"))

        with open(self.path("conversations.json"), "w") as f:
            json.dump(conversations[:2], f)
        reference = self.venv("-c", TRANSFORMERS_CHAT, tok, self.path("conversations.json"))
        self.assertEqual(reference.returncode, 0, reference.stderr.decode())
        if json.loads(reference.stdout) is None:
            self.skipTest("transformers is not in the venv (scripts/setup.sh installs it)")
        self.assertEqual(json.loads(reference.stdout), [tokens.tolist() for tokens, _ in documents])

    def test_chat_mistakes(self):
        tok = self.tokenizer()
        out = ["--output", self.path("bad.h5"), "--format", "chat"]
        bad = self.write("bad.jsonl", b'{"messages": [{"role": "user"}]}\n')
        result = self.venv(SCRIPT, "--tokenizer", tok, "--input", bad, *out)
        self.assertEqual(result.returncode, 4, result.stderr.decode())
        self.assertIn(b"bad.jsonl:1: a chat record needs", result.stderr)
        # A template whose generation prompt is not a prefix of the answered turn.
        with open(self.path("tok/tokenizer_config.json")) as f:
            config = json.load(f)
        config["chat_template"] = ("{% for m in messages %}{{ m['role'] + ': ' + m['content'] + '\\n' }}{% endfor %}"
                                   "{% if add_generation_prompt %}{{ 'ASSISTANT>' }}{% endif %}")
        self.write("tok/tokenizer_config.json", json.dumps(config).encode())
        chat = self.write("c.jsonl", json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                              {"role": "assistant", "content": "yo"}]}).encode() + b"\n")
        result = self.venv(SCRIPT, "--tokenizer", tok, "--input", chat, *out)
        self.assertEqual(result.returncode, 4, result.stderr.decode())
        self.assertIn(b"c.jsonl:1: the chat template's rendering of the turns before assistant message 1", result.stderr)
        del config["chat_template"]
        self.write("tok/tokenizer_config.json", json.dumps(config).encode())
        result = self.venv(SCRIPT, "--tokenizer", tok, "--input", chat, *out)
        self.assertEqual(result.returncode, 2, result.stderr.decode())
        self.assertIn(b"has no chat_template", result.stderr)
        self.assertFalse(os.path.exists(self.path("bad.h5")))


if __name__ == "__main__":
    unittest.main()
