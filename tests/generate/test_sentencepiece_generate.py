"""nss_generate with a SentencePiece tokenizer.model (Llama 2 / Mistral
style), read through libnss_sentencepiece_bridge.so inside a process that
holds libtorch: a model trained here with the venv's sentencepiece beside a
tiny random Llama of its vocabulary. The process starts (libsentencepiece's
protobuf no longer meets libtorch's), greedy generation writes the tokens
transformers' generate() writes from python sentencepiece's ids with BOS
(so the prompt ids are the same), and the text is sp.decode() of the tokens;
found beside the weights and given with --tokenizer alike. What each piece
adds to a text (--constrain schema's vocabulary), joined, is the decoded
text of 400 lines."""
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, VENV_PYTHON, binary, remove, scratch  # noqa: E402

PROMPTS = ["Checkpoints are", "naïve café: 1234 ✓", "日本語 tokens"]
NEW_TOKENS = 10
MAKE = r"""
import json, sys, torch, sentencepiece as spm
from transformers import LlamaConfig, LlamaForCausalLM
out, corpus, new_tokens, prompts = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
spm.SentencePieceTrainer.train(input=corpus, model_prefix=out + "/spm", model_type="bpe", vocab_size=400,
                               byte_fallback=True, split_digits=True, bos_id=1, eos_id=2, unk_id=0, pad_id=-1,
                               minloglevel=2)
processor = spm.SentencePieceProcessor(model_file=out + "/spm.model")
torch.manual_seed(0)
config = LlamaConfig(vocab_size=processor.get_piece_size(), hidden_size=32, intermediate_size=64,
                     num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                     bos_token_id=1, eos_token_id=2, tie_word_embeddings=False, initializer_range=0.2)
model = LlamaForCausalLM(config).eval()
model.save_pretrained(out + "/model", safe_serialization=True)
reference = []
for prompt in prompts:
    ids = torch.tensor([[processor.bos_id()] + processor.encode(prompt)])
    with torch.no_grad():
        generated = model.generate(input_ids=ids, max_new_tokens=new_tokens, do_sample=False, synced_gpus=False,
                                   eos_token_id=None, pad_token_id=0)
    reference.append(generated[0, ids.shape[1]:].tolist())
json.dump(reference, open(out + "/reference.json", "w"))
"""
DECODE = r"""
import json, sys, sentencepiece as spm
processor = spm.SentencePieceProcessor(model_file=sys.argv[1])
for line in sys.stdin:
    print(json.dumps(processor.decode(json.loads(line))))
"""


def sanitized_build():
    cache = os.path.join(os.path.dirname(os.path.dirname(binary("nss_generate"))), "CMakeCache.txt")
    return os.path.isfile(cache) and "NSS_SANITIZE:BOOL=ON" in open(cache).read()


@unittest.skipIf(sanitized_build(), "AddressSanitizer refuses RTLD_DEEPBIND, which the SentencePiece bridge needs "
                 "(lib/tokenizer/sentencepiece_bridge.h); a build without NSS_SANITIZE runs this test")
class SentencePieceGenerateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("spm_generate")
        with open(os.path.join(SOURCE, "docs", "data.md"), encoding="utf-8") as f:
            corpus = f.read()
        with open(os.path.join(cls.tmp, "corpus.txt"), "w", encoding="utf-8") as f:
            f.write(corpus + "\n".join(PROMPTS) + "\n")
        made = subprocess.run([VENV_PYTHON, "-c", MAKE, cls.tmp, os.path.join(cls.tmp, "corpus.txt"), str(NEW_TOKENS),
                               json.dumps(PROMPTS)], capture_output=True, text=True, timeout=300)
        assert made.returncode == 0, made.stderr
        with open(os.path.join(cls.tmp, "reference.json")) as f:
            cls.reference = json.load(f)
        cls.model = os.path.join(cls.tmp, "spm.model")
        cls.prompts = os.path.join(cls.tmp, "prompts.jsonl")
        with open(cls.prompts, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps({"prompt": p}) + "\n" for p in PROMPTS))

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def generate(self, *args):
        proc = subprocess.run([binary("nss_generate"), "--prompts", self.prompts, "--temperature", "0",
                               "--max-new-tokens", str(NEW_TOKENS)] + list(args), capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        samples = sorted((json.loads(line) for line in proc.stdout.splitlines() if line.strip()),
                         key=lambda s: s["prompt_index"])
        self.assertEqual(len(samples), len(PROMPTS), proc.stdout)
        return samples

    def test_token_bytes_join_to_the_decoded_text(self):
        # What --constrain schema reads of each piece: alone, after another,
        # byte pieces as their bytes; joined, they are what decode gives.
        with open(os.path.join(self.tmp, "corpus.txt"), encoding="utf-8") as f:
            lines = [line for line in f.read().splitlines() if line.strip()][:400] + PROMPTS
        proc = subprocess.run([binary("codec_bytes_probe"), self.model], capture_output=True, text=True,
                              timeout=120, input="".join(json.dumps(line) + "\n" for line in lines))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        results = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertEqual(len(results), len(lines))
        disagree = [line for line, r in zip(lines, results) if not r["agree"]]
        self.assertEqual(disagree, [])
        self.assertGreater(sum(r["ids"] for r in results), 5000)

    def check(self, samples):
        for sample, reference in zip(samples, self.reference):
            tokens = sample["tokens"]
            # The model may write its EOS (2) before the reference's length;
            # `tokens` leaves the end token out.
            self.assertEqual(tokens, reference[:len(tokens)], sample)
            if len(tokens) < NEW_TOKENS:
                self.assertEqual(sample["finish_reason"], "eos", sample)
                self.assertEqual(reference[len(tokens)], 2, sample)
        decoded = subprocess.run([VENV_PYTHON, "-c", DECODE, self.model], capture_output=True, text=True, timeout=60,
                                 input="".join(json.dumps(s["tokens"]) + "\n" for s in samples))
        self.assertEqual(decoded.returncode, 0, decoded.stderr)
        self.assertEqual([s["text"] for s in samples], [json.loads(line) for line in decoded.stdout.splitlines()])

    def test_tokenizer_model_beside_the_weights(self):
        model_dir = os.path.join(self.tmp, "model")
        shutil.copy(self.model, os.path.join(model_dir, "tokenizer.model"))
        self.check(self.generate("--model", model_dir))

    def test_tokenizer_model_given_with_the_flag(self):
        model_dir = os.path.join(self.tmp, "bare")
        shutil.copytree(os.path.join(self.tmp, "model"), model_dir,
                        ignore=shutil.ignore_patterns("tokenizer.model"))
        self.check(self.generate("--model", model_dir, "--tokenizer", self.model))

    def test_a_file_that_is_not_a_model_is_a_data_error(self):
        bogus = os.path.join(self.tmp, "bogus.model")
        with open(bogus, "wb") as f:
            f.write(b"not a protobuf")
        proc = subprocess.run([binary("nss_generate"), "--model", os.path.join(self.tmp, "model"), "--tokenizer",
                               bogus, "--prompt", "x"], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn("is not a SentencePiece model", proc.stderr)


if __name__ == "__main__":
    unittest.main()
