"""SentencePiece models in C++ (lib/tokenizer's SentencePieceTokenizer over
Debian's libsentencepiece, through sentencepiece_probe) against the Python
`sentencepiece` package and against Hugging Face `tokenizers`' conversion of
the same file (transformers' LlamaTokenizerFast from_slow, legacy, with the
prefix space Llama 2's own tokenizer.json has), both in the venv:
the same ids, with and without BOS, and the same decoded text, for a
Llama-2-style model (BPE, byte fallback, split digits) trained here, on the
corpus of the tokenizer.json parity test. A file that is not a SentencePiece
model is exit 4 naming it."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nss_e2e  # noqa: E402
from test_tokenizer_parity import HANDMADE  # noqa: E402

TRAIN = r"""
import sys, sentencepiece as spm
spm.SentencePieceTrainer.train(input=sys.argv[1], model_prefix=sys.argv[2], model_type="bpe", vocab_size=600,
                               byte_fallback=True, split_digits=True, character_coverage=0.9995,
                               normalization_rule_name="identity", remove_extra_whitespaces=False,
                               allow_whitespace_only_pieces=True, add_dummy_prefix=True, bos_id=1, eos_id=2,
                               unk_id=0, pad_id=-1, minloglevel=2)
"""

REFERENCE = r"""
import json, sys, sentencepiece as spm
from transformers import LlamaTokenizerFast
model = sys.argv[1]
processor = spm.SentencePieceProcessor(model_file=model)
fast = LlamaTokenizerFast(vocab_file=model, from_slow=True, legacy=True, add_prefix_space=True, add_bos_token=True,
                          add_eos_token=False).backend_tokenizer
for line in sys.stdin:
    text = json.loads(line)
    ids = processor.encode(text)
    print(json.dumps({"ids": ids, "decoded": processor.decode(ids),
                      "hf_ids_bos": fast.encode(text, add_special_tokens=True).ids,
                      "hf_decoded": fast.decode(ids, skip_special_tokens=False)}))
"""


class SentencePieceParityTest(nss_e2e.VenvScratchDirTest):
    SCRATCH_TAG = "spm_parity"

    def test_ids_and_text_match_sentencepiece_and_tokenizers(self):
        corpus = self.path("corpus.txt")
        with open(corpus, "w", encoding="utf-8") as out:
            for name in sorted(os.listdir(os.path.join(nss_e2e.SOURCE, "docs"))):
                with open(os.path.join(nss_e2e.SOURCE, "docs", name), encoding="utf-8") as f:
                    out.write(f.read())
            out.write("\n".join(HANDMADE[:60]) + "\n")
        trained = subprocess.run([nss_e2e.VENV_PYTHON, "-c", TRAIN, corpus, self.path("spm")],
                                 capture_output=True, text=True, timeout=240)
        self.assertEqual(trained.returncode, 0, trained.stderr)
        model = self.path("spm.model")
        texts = [t for t in HANDMADE if "\x00" not in t]
        lines = "".join(json.dumps(t) + "\n" for t in texts)
        ours = subprocess.run([nss_e2e.binary("sentencepiece_probe"), model], input=lines, capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        ours = [json.loads(line) for line in ours.stdout.split("\n")[1:] if line]  # not splitlines: U+2028
        theirs = subprocess.run([nss_e2e.VENV_PYTHON, "-c", REFERENCE, model], input=lines, capture_output=True,
                                text=True, timeout=240)
        self.assertEqual(theirs.returncode, 0, theirs.stderr)
        theirs = [json.loads(line) for line in theirs.stdout.split("\n") if line]
        self.assertEqual(len(ours), len(texts))
        tokenizers_differ = []
        for text, mine, reference in zip(texts, ours, theirs):
            self.assertEqual(mine["ids"], reference["ids"], repr(text))
            self.assertEqual(mine["ids_bos"], [1] + reference["ids"], repr(text))
            self.assertEqual(mine["decoded"], reference["decoded"], repr(text))
            if mine["ids_bos"] != reference["hf_ids_bos"] or mine["decoded"] != reference["hf_decoded"]:
                tokenizers_differ.append(text)
        self.assertEqual(tokenizers_differ, [], "tokenizers' conversion encodes these differently")

    def test_a_file_that_is_not_a_model_is_a_data_error(self):
        bogus = self.write("tokenizer.model", b"not a protobuf")
        proc = subprocess.run([nss_e2e.binary("sentencepiece_probe"), bogus], input="", capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn("is not a SentencePiece model", proc.stderr)


if __name__ == "__main__":
    unittest.main()
