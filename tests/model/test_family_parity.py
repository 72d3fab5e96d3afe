"""Each family the test venv's transformers knows, against transformers
itself: tiny random models made by transformers (from_config,
save_pretrained; biases drawn at random, since transformers starts them at
0), scored by nss_eval on windows of a token file and by transformers on the
same windows in float32: the mean loss agrees to 1e-6 relative. Llama
(with and without attention_bias: q/k/v/o biases), Mistral without a window
and with one of 8 keys (shorter than the 24-token windows scored), and Qwen2
(q/k/v biases, tied and untied heads; transformers 4.46 computes Qwen2's
windows only with flash attention, so they are checked against the
fixtures of transformers 5, test_family_fixtures.py)."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import VENV_PYTHON, binary, remove, scratch, write_token_dataset  # noqa: E402

SEQ_LEN, BATCHES, BATCH_SIZE, VOCAB = 24, 3, 2, 258
REFERENCE = r"""
import json, sys, h5py, torch, transformers
directory, family, variant, data, seq_len, batches, batch_size = sys.argv[1:8]
seq_len, batches, batch_size = int(seq_len), int(batches), int(batch_size)
torch.manual_seed(3)
Config, Model = getattr(transformers, family + "Config"), getattr(transformers, family + "ForCausalLM")
extra = {"sliding_window": 8 if variant == "window" else None} if family == "Mistral" else {}
if variant == "bias":
    extra["attention_bias"] = True
config = Config(vocab_size=%d, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                tie_word_embeddings=variant == "tied", initializer_range=0.2, **extra)
model = Model(config).eval()
with torch.no_grad():
    for name, parameter in model.named_parameters():
        if name.endswith(".bias"):
            parameter.normal_(0.0, 0.2)
model.save_pretrained(directory, safe_serialization=True)
tokens = torch.from_numpy(h5py.File(data, "r")["tokens"][...].astype("int64"))
total, count = 0.0, 0
with torch.no_grad():
    for batch in range(batches):
        starts = [(batch * batch_size + r) * seq_len for r in range(batch_size)]
        windows = torch.stack([tokens[s:s + seq_len + 1] for s in starts])
        logits = model(windows[:, :-1]).logits.double()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1),
                                                 reduction="sum")
        total, count = total + loss.item(), count + windows[:, 1:].numel()
print(json.dumps({"loss": total / count, "tokens": count}))
""" % VOCAB


class FamilyParityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("family_parity")
        cls.data = write_token_dataset(os.path.join(cls.tmp, "train.h5"), vocab_size=VOCAB)

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def expect_parity(self, family, variant):
        directory = os.path.join(self.tmp, family + "_" + variant)
        made = subprocess.run([VENV_PYTHON, "-c", REFERENCE, directory, family, variant, self.data, str(SEQ_LEN),
                               str(BATCHES), str(BATCH_SIZE)], capture_output=True, text=True, timeout=300)
        self.assertEqual(made.returncode, 0, made.stderr)
        expected = json.loads(made.stdout.splitlines()[-1])
        proc = subprocess.run([binary("nss_eval"), "--model", directory, "--data", self.data, "--seq-len",
                               str(SEQ_LEN), "--batches", str(BATCHES), "--batch-size", str(BATCH_SIZE)],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        result = json.loads(proc.stdout.splitlines()[-1])
        self.assertEqual(result["tokens"], expected["tokens"])
        self.assertAlmostEqual(result["loss"] / expected["loss"], 1.0, delta=1e-6, msg=(result, expected))
        print("%s %s: nss_eval %.9f, transformers %.9f" % (family, variant, result["loss"], expected["loss"]))

    def test_families_score_as_transformers(self):
        for family, variant in (("Llama", "untied"), ("Llama", "bias"), ("Mistral", "untied"),
                                ("Mistral", "window"), ("Qwen2", "untied"), ("Qwen2", "tied")):
            with self.subTest(family=family, variant=variant):
                self.expect_parity(family, variant)


if __name__ == "__main__":
    unittest.main()
