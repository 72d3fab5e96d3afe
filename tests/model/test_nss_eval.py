"""nss_eval end to end: Hugging Face directories with random weights written
by NumPy (F32, BF16, F16, sharded; tied and untied heads) score the same loss
as the independent NumPy Llama to 1e-4, and every malformed model file, bad
dataset or bad argument ends with its documented exit code and message."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import binary  # noqa: E402
from hf_files import llama_config, random_llama_weights, write_model_dir  # noqa: E402
from hf_files import read_model_dir  # noqa: E402
from llama_reference import Llama, eval_loss  # noqa: E402

NSS_EVAL = binary("nss_eval")


def write_tokens(path, tokens, vocab_size):
    with h5py.File(path, "w") as f:
        f.create_dataset("tokens", data=np.asarray(tokens, dtype=np.uint16))
        f.attrs["tokenizer"] = "test"
        f.attrs["vocab_size"] = vocab_size
        f.attrs["max_token_id"] = int(np.max(tokens))
        f.attrs["documents"] = 1


def run_eval(*args):
    return subprocess.run([NSS_EVAL] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


class NssEvalTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="nss_eval_")
        self.tokens = np.random.default_rng(5).integers(0, 61, 2000)
        self.data = os.path.join(self.dir, "tokens.h5")
        write_tokens(self.data, self.tokens, 61)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def model_dir(self, name, config, dtype="F32", shards=1, seed=0):
        path = os.path.join(self.dir, name)
        write_model_dir(path, config, random_llama_weights(config, seed), dtype, shards)
        return path

    def evaluate(self, model, seq_len, batches, batch_size):
        proc = run_eval("--model", model, "--data", self.data, "--seq-len", seq_len,
                        "--batches", batches, "--batch-size", batch_size)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stdout)
        return json.loads(lines[0])

    def expect_same_loss(self, model, seq_len=16, batches=3, batch_size=2):
        result = self.evaluate(model, seq_len, batches, batch_size)
        expected, tokens = eval_loss(model, self.tokens, seq_len, batches, batch_size)
        self.assertEqual(result["tokens"], tokens)
        self.assertAlmostEqual(result["loss"], expected, delta=1e-4)
        return result["loss"]

    def test_loss_equals_numpy_reference_tied_and_untied(self):
        untied = self.expect_same_loss(self.model_dir("untied", llama_config(tied=False)))
        tied = self.expect_same_loss(self.model_dir("tied", llama_config(tied=True)))
        self.assertGreater(abs(untied - tied), 1e-3)  # the two heads really differ

    def test_packed_documents_score_as_each_document_alone(self):
        # Documents of 3..13 tokens with a loss mask (the first two labels of
        # each are prompt); nss_eval --packing documents packs them next-fit
        # in file order into rows of seq_len + 1 = 17. The independent NumPy
        # Llama scores every document by itself (its own positions 0..L-1, no
        # other document in sight): the losses and target counts must agree.
        rng = np.random.default_rng(9)
        lengths = [int(n) for n in rng.integers(3, 14, 40)]
        documents = [rng.integers(0, 61, n) for n in lengths]
        masks = [np.array([0, 0] + [1] * (n - 2), dtype=np.uint8) for n in lengths]
        path = os.path.join(self.dir, "packed.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("tokens", data=np.concatenate(documents).astype(np.uint16))
            f.create_dataset("loss_mask", data=np.concatenate(masks))
            f.create_dataset("document_offsets", data=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
            f.attrs["documents"] = len(lengths)
        seq_len, batches, batch_size = 16, 2, 3
        rows, filled = [], seq_len + 1
        for d, n in enumerate(lengths):  # next-fit, file order
            if filled + n > seq_len + 1:
                rows.append([])
                filled = 0
            rows[-1].append(d)
            filled += n
        for config in (llama_config(tied=False), llama_config(tied=True)):
            model = self.model_dir("packed_%s" % config["tie_word_embeddings"], config)
            proc = run_eval("--model", model, "--data", path, "--seq-len", seq_len, "--batches", batches,
                            "--batch-size", batch_size, "--packing", "documents")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            result = json.loads(proc.stdout)
            reference = Llama(*read_model_dir(model))
            total, count = 0.0, 0
            for d in (d for row in rows[:batches * batch_size] for d in row):
                logits = reference.logits(documents[d][None, :-1].astype(np.int64))[0]
                log_z = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
                nll = log_z - logits[np.arange(lengths[d] - 1), documents[d][1:]]
                total += float((nll * masks[d][1:]).sum())
                count += int(masks[d][1:].sum())
            self.assertEqual(result["tokens"], count)
            self.assertAlmostEqual(result["loss"], total / count, delta=1e-4)
            # As windows the documents would see each other: another number.
            windows = self.evaluate_data(model, path, seq_len, batches, batch_size)
            self.assertNotAlmostEqual(windows["loss"], result["loss"], delta=1e-3)

    def evaluate_data(self, model, data, seq_len, batches, batch_size):
        proc = run_eval("--model", model, "--data", data, "--seq-len", seq_len, "--batches", batches,
                        "--batch-size", batch_size)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def test_bf16_f16_sharded_and_scaled_rope(self):
        llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                  "high_freq_factor": 4.0, "original_max_position_embeddings": 256}
        config = llama_config(kv_heads=1, head_dim=12, rope_scaling=llama3)
        self.expect_same_loss(self.model_dir("bf16", config, "BF16", shards=3), seq_len=24)
        linear = llama_config(tied=True, kv_heads=4, rope_scaling={"type": "linear", "factor": 2.0})
        self.expect_same_loss(self.model_dir("f16", linear, "F16", shards=2), batches=2, batch_size=3)

    def test_default_window_arguments(self):
        model = self.model_dir("defaults", llama_config())
        proc = run_eval("--model", model, "--data", self.data)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        result = json.loads(proc.stdout)
        expected, tokens = eval_loss(model, self.tokens, 128, 4, 2)
        self.assertEqual(result["tokens"], 4 * 2 * 128)
        self.assertAlmostEqual(result["loss"], expected, delta=1e-4)

    def expect_failure(self, code, args, *fragments):
        proc = run_eval(*args)
        self.assertEqual(proc.returncode, code, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertIn("nss_eval: error:", proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)

    def corrupt(self, mutate, name):
        """A copy of a good model directory whose model.safetensors `mutate`(bytes) rewrote."""
        path = self.model_dir(name, llama_config())
        weights = os.path.join(path, "model.safetensors")
        with open(weights, "rb") as f:
            data = f.read()
        with open(weights, "wb") as f:
            f.write(mutate(data))
        return path, weights

    @staticmethod
    def edit_header(edit):
        def mutate(data):
            (length,) = struct.unpack("<Q", data[:8])
            header = json.loads(data[8:8 + length])
            edit(header)
            text = json.dumps(header).encode()
            return struct.pack("<Q", len(text)) + text + data[8 + length:]
        return mutate

    def test_malformed_weight_files_exit_4(self):
        def overlap(header):
            header["model.norm.weight"]["data_offsets"] = header["lm_head.weight"]["data_offsets"]
            header["model.norm.weight"]["shape"] = header["lm_head.weight"]["shape"]

        def unknown_dtype(header):
            header["model.norm.weight"]["dtype"] = "F8_E4M3"

        def size_mismatch(header):
            header["model.norm.weight"]["shape"] = [7]

        def out_of_range(header):
            begin, end = header["model.norm.weight"]["data_offsets"]
            header["model.norm.weight"]["data_offsets"] = [begin + 10**9, end + 10**9]

        cases = [
            ("truncated", lambda data: data[:len(data) // 2], "truncated"),
            ("header_length", lambda data: struct.pack("<Q", 1 << 40) + data[8:], "exceeds the limit"),
            ("header_beyond_file", lambda data: struct.pack("<Q", len(data)) + data[8:],
             "truncated: the header claims"),
            ("not_json", lambda data: data[:8] + b"!" + data[9:], "not valid JSON"),
            ("overlap", self.edit_header(overlap), "overlap"),
            ("dtype", self.edit_header(unknown_dtype), "unsupported dtype 'F8_E4M3'"),
            ("size", self.edit_header(size_mismatch), "needs 28 bytes"),
            ("range", self.edit_header(out_of_range), "offsets out of range: tensor 'model.norm.weight'"),
            ("hole", self.edit_header(lambda h: h.pop("model.layers.1.mlp.up_proj.weight")),
             "belong to no tensor"),
        ]
        for name, mutate, fragment in cases:
            with self.subTest(name):
                model, weights = self.corrupt(mutate, name)
                self.expect_failure(4, ["--model", model, "--data", self.data], weights + ": ",
                                    fragment)
        config = llama_config()
        weights = random_llama_weights(config)
        del weights["model.layers.1.mlp.up_proj.weight"]
        missing = os.path.join(self.dir, "missing_tensor")
        write_model_dir(missing, config, weights)
        self.expect_failure(4, ["--model", missing, "--data", self.data],
                            "has no tensor 'model.layers.1.mlp.up_proj.weight'")

    def test_model_directory_errors_exit_4(self):
        model = self.model_dir("good", llama_config())
        with open(os.path.join(model, "config.json")) as f:
            config = json.load(f)
        wrong_shape = dict(config, intermediate_size=64)
        bad = os.path.join(self.dir, "wrong_shape")
        shutil.copytree(model, bad)
        with open(os.path.join(bad, "config.json"), "w") as f:
            json.dump(wrong_shape, f)
        self.expect_failure(4, ["--model", bad, "--data", self.data],
                            "has shape [48, 32] but config.json implies [64, 32]")
        with open(os.path.join(bad, "config.json"), "w") as f:
            json.dump(dict(config, architectures=["GPTNeoXForCausalLM"]), f)
        self.expect_failure(4, ["--model", bad, "--data", self.data], "LlamaForCausalLM")
        with open(os.path.join(bad, "config.json"), "w") as f:
            json.dump(dict(config, architectures=["Gemma3ForCausalLM"], final_logit_softcapping=30.0), f)
        self.expect_failure(4, ["--model", bad, "--data", self.data], "final_logit_softcapping",
                            "logit softcapping is not implemented")
        with open(os.path.join(bad, "config.json"), "w") as f:
            json.dump(dict(config, tie_word_embeddings=True, vocab_size=62), f)
        self.expect_failure(4, ["--model", bad, "--data", self.data], "model.embed_tokens.weight")
        self.expect_failure(4, ["--model", "meta-llama/Llama-3.2-1B", "--data", self.data],
                            "never downloads", "huggingface-cli download meta-llama/Llama-3.2-1B")
        sharded = self.model_dir("sharded", llama_config(), shards=2)
        os.remove(os.path.join(sharded, "model-00002-of-00002.safetensors"))
        self.expect_failure(4, ["--model", sharded, "--data", self.data],
                            "model-00002-of-00002.safetensors is missing")

    def test_dataset_errors_exit_4(self):
        model = self.model_dir("good", llama_config(vocab=61))
        self.expect_failure(4, ["--model", model, "--data", os.path.join(self.dir, "none.h5")],
                            "none.h5")
        short = os.path.join(self.dir, "short.h5")
        write_tokens(short, self.tokens[:100], 61)
        self.expect_failure(4, ["--model", model, "--data", short, "--seq-len", "16"], "windows")
        small_vocab = self.model_dir("small_vocab", llama_config(vocab=40))
        self.expect_failure(4, ["--model", small_vocab, "--data", self.data], "vocab")

    def test_bad_arguments_exit_2(self):
        model = self.model_dir("good", llama_config())
        self.expect_failure(2, ["--data", self.data], "--model")
        self.expect_failure(2, ["--model", model, "--data", self.data, "--seq-len", "0"],
                            "--seq-len: Value 0 not in range 1 to 1048576")
        self.expect_failure(2, ["--model", model, "--data", self.data, "--seq-len", "300"],
                            "max_position_embeddings")
        self.expect_failure(2, ["--model", model, "--data", self.data, "--bogus"], "--bogus")


if __name__ == "__main__":
    unittest.main()
