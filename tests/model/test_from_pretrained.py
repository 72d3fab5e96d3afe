"""model.from_pretrained end to end: a YAML with only the directory trains the
shape its config.json defines (one that matches no preset), every place that
shows the configuration shows that shape, a key or preset that disagrees is
exit 2 naming each key, float keys agree within a relative 1e-6, a
directory that is not there is exit 4 on every rank, a structural problem of
the weights is the preflight's `model.pretrained` no-go (exit 4) and a
non-finite weight exit 4 at load, named, and a dataset made with another
tokenizer than the one beside the weights is exit 4."""
import hashlib
import json
import os
import re
import subprocess
import sys
import unittest

import h5py
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import binary, mpirun, remove, scratch, write, write_token_dataset  # noqa: E402
from hf_files import llama_config, random_llama_weights, write_model_dir  # noqa: E402

NSS = binary("nss_hpc")
RANKS = 2
# A float32 round trip of 1e-5, as converted checkpoints store it.
FLOAT32_EPS = 9.999999747378752e-06


def saved_steps(run_dir):
    """Steps in the run's checkpoint directory (which the job creates and
    locks before the preflight, so it exists even when nothing trained)."""
    checkpoints = os.path.join(run_dir, "checkpoints")
    return [n for n in os.listdir(checkpoints) if n.startswith("step_")] if os.path.isdir(checkpoints) else []


class FromPretrainedTest(unittest.TestCase):
    def setUp(self):
        self.tmp = scratch("from_pretrained")
        self.model = os.path.join(self.tmp, "model")
        config = llama_config(hidden=48, intermediate=80, layers=2, heads=4, kv_heads=2,
                              vocab=300, eps=FLOAT32_EPS)
        write_model_dir(self.model, config, random_llama_weights(config, seed=1, scale=0.05))
        self.data = write_token_dataset(os.path.join(self.tmp, "train.h5"))
        self.run_dir = os.path.join(self.tmp, "run")
        self.yaml = write(os.path.join(self.tmp, "run.yaml"),
                          "model:\n  from_pretrained: %s\ndata:\n  path: %s\n  seq_len: 32\n"
                          "training:\n  global_batch_size: 4\n  micro_batch_size: 2\n"
                          "  max_steps: 3\n  warmup_steps: 1\ncheckpoint:\n  interval_steps: 3\n"
                          "run:\n  output_dir: %s\n" % (self.model, self.data, self.run_dir))

    def tearDown(self):
        remove(self.tmp)

    def nss(self, *sets, ranks=RANKS, extra=()):
        args = [NSS, self.yaml] + [a for s in sets for a in ("--set", s)] + list(extra)
        proc = mpirun(ranks, args, timeout=240)
        return proc, proc.stdout + proc.stderr

    def expect_shape(self, model):
        self.assertEqual((model["hidden_size"], model["intermediate_size"],
                          model["num_hidden_layers"], model["num_attention_heads"],
                          model["num_key_value_heads"], model["head_dim"], model["vocab_size"],
                          model["max_position_embeddings"]), (48, 80, 2, 4, 2, 12, 300, 256))
        self.assertEqual(model["rms_norm_eps"], FLOAT32_EPS)

    def test_only_from_pretrained_trains_the_shape_of_config_json(self):
        proc, output = self.nss(ranks=1, extra=["--print-config"])
        self.assertEqual(proc.returncode, 0, output)
        self.expect_shape(yaml.safe_load(proc.stdout)["model"])

        proc, output = self.nss()
        self.assertEqual(proc.returncode, 0, output)
        with open(os.path.join(self.run_dir, "config.resolved.yaml")) as f:
            self.expect_shape(yaml.safe_load(f)["model"])
        with open(os.path.join(self.run_dir, "checkpoints", "step_00000003",
                               "metadata.json")) as f:
            metadata = json.load(f)
        self.expect_shape(yaml.safe_load(metadata["state"]["config"])["model"])
        self.assertEqual(metadata["tensors"]["lm_head.weight"]["shape"], [300, 48])

    def test_a_key_or_preset_that_disagrees_is_exit_2_naming_each_key(self):
        proc, output = self.nss("model.hidden_size=96", "model.vocab_size=512")
        self.assertEqual(proc.returncode, 2, output)
        for key in ("model.hidden_size: is 96 but", "model.vocab_size: is 512 but"):
            self.assertIn(key, output)
        self.assertNotIn("resolve_pretrained", output)
        proc, output = self.nss("model.preset=smollm2-135m")
        self.assertEqual(proc.returncode, 2, output)
        self.assertIn("'smollm2-135m' sets hidden_size = 576 but %s/config.json says 48"
                      % self.model, output)
        self.assertEqual(saved_steps(self.run_dir), [])

    def test_float_keys_agree_within_a_relative_1e_6(self):
        # 1e-5 (the preset's value) against the file's float32 round trip, and a
        # rope_theta 1e-10 away: the same model; the file's values are used.
        smollm = llama_config(hidden=576, intermediate=1536, layers=30, heads=9, kv_heads=3,
                              vocab=49152, tied=True, rope_theta=100000.0, eps=FLOAT32_EPS)
        smollm["max_position_embeddings"] = 8192
        write_model_dir(self.model, smollm, {})  # the shape needs config.json only
        proc, output = self.nss("model.preset=smollm2-135m", "model.rope_theta=100000.00001",
                                ranks=1, extra=["--print-config"])
        self.assertEqual(proc.returncode, 0, output)
        model = yaml.safe_load(proc.stdout)["model"]
        self.assertEqual(model["rms_norm_eps"], FLOAT32_EPS)
        self.assertEqual(model["rope_theta"], 100000.0)
        proc, output = self.nss("model.preset=smollm2-135m", "model.rope_theta=100001",
                                ranks=1, extra=["--print-config"])
        self.assertEqual(proc.returncode, 2, output)
        self.assertIn("model.rope_theta: is 100001 but", output)

    def test_a_directory_that_is_not_there_is_exit_4_on_every_rank(self):
        for where, message in (("org/name", "is not a local directory"),
                               (os.path.join(self.tmp, "missing"), "does not exist")):
            proc, output = self.nss("model.from_pretrained=" + where)
            self.assertEqual(proc.returncode, 4, output)
            self.assertIn(message, output)
            self.assertEqual(output.count("nss_hpc: error:"), 1, output)

    def test_a_node_that_cannot_see_the_model_is_named_exit_4(self):
        # Rank 1 runs in its own mount namespace with an empty tmpfs over the
        # model directory: a node whose filesystem lacks what rank 0's has.
        hide = ('if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec unshare -m sh -c '
                '\'mount -t tmpfs none "$0" && exec "$@"\' "$0" "$@"; else exec "$@"; fi')
        probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("unshare -m is not permitted here: %s" % probe.stderr.decode().strip())
        proc = mpirun(2, ["sh", "-c", hide, self.model, NSS, self.yaml], timeout=240)
        output = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 4, output)
        self.assertIn("no-go: [model.pretrained]", output)
        self.assertRegex(output, r"rank 1 [^:]*: model.from_pretrained %s/config.json" % re.escape(self.model))
        self.assertIn("huggingface-cli download", output)
        self.assertEqual(saved_steps(self.run_dir), [])

    def broken_model(self, name, change_config=None, change_weights=None):
        """A copy of the test model with config.json or the weights changed."""
        config = llama_config(hidden=48, intermediate=80, layers=2, heads=4, kv_heads=2,
                              vocab=300, eps=FLOAT32_EPS)
        weights = random_llama_weights(config, seed=1, scale=0.05)
        if change_config:
            change_config(config)
        if change_weights:
            change_weights(weights)
        path = os.path.join(self.tmp, name)
        write_model_dir(path, config, weights)
        return path

    def expect_exit_4_before_training(self, model, message, check="model.pretrained"):
        proc, output = self.nss("model.from_pretrained=" + model)
        self.assertEqual(proc.returncode, 4, output)
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)
        self.assertIn(message, output)
        if check:
            self.assertIn("no-go: [%s]" % check, output)
        self.assertNotIn("step 1/", output)
        self.assertEqual(saved_steps(self.run_dir), [])

    def test_structural_problems_are_a_preflight_no_go_exit_4(self):
        truncated = self.broken_model("truncated")
        with open(os.path.join(truncated, "model.safetensors"), "r+b") as f:
            f.truncate(os.path.getsize(f.name) - 100)
        self.expect_exit_4_before_training(truncated, "model.safetensors: truncated")

        def drop(weights):
            del weights["model.layers.1.self_attn.k_proj.weight"]
        self.expect_exit_4_before_training(self.broken_model("missing", change_weights=drop),
                                           "model.layers.1.self_attn.k_proj.weight")

        def reshape(weights):
            weights["model.norm.weight"] = weights["model.norm.weight"][:40]
        self.expect_exit_4_before_training(self.broken_model("shape", change_weights=reshape),
                                           "model.norm.weight")

        def phi3(config):
            config["architectures"] = ["Phi3ForCausalLM"]
        # A family nss_hpc has no description of: refused before anything trains.
        self.expect_exit_4_before_training(self.broken_model("arch", change_config=phi3),
                                           "Phi3ForCausalLM", check=None)

    def test_a_non_finite_weight_is_exit_4_at_load_naming_the_tensor(self):
        def poison(weights):
            weights["model.layers.1.mlp.up_proj.weight"][3, 5] = float("nan")
        model = self.broken_model("nan", change_weights=poison)
        proc, output = self.nss("model.from_pretrained=" + model)
        self.assertEqual(proc.returncode, 4, output)
        self.assertIn("tensor 'model.layers.1.mlp.up_proj.weight' holds nan", output)
        self.assertNotIn("step 1/", output)
        self.assertFalse(os.path.exists(os.path.join(self.run_dir, "checkpoints", "latest")))

    def test_the_dataset_must_be_made_with_the_models_tokenizer(self):
        # A model that brings its own tokenizer: byte-level ids would pass the
        # vocabulary check and train nonsense.
        tokenizer = os.path.join(self.model, "tokenizer.json")
        write(tokenizer, '{"version": "1.0", "model": {"type": "BPE"}}\n')
        with open(tokenizer, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        proc, output = self.nss()
        self.assertEqual(proc.returncode, 4, output)
        self.assertIn("no-go: [data.vocabulary]", output)
        self.assertIn("was made with tokenizer byte (no tokenizer_sha256 attribute), not with "
                      "the model's " + tokenizer, output)
        self.assertNotIn("step 1/", output)

        with h5py.File(self.data, "a") as f:
            f.attrs["tokenizer"] = "hf:/elsewhere/tokenizer.json"
            f.attrs["tokenizer_sha256"] = "0" * 64
        proc, output = self.nss()
        self.assertEqual(proc.returncode, 4, output)
        self.assertIn("tokenizer_sha256 " + "0" * 64, output)

        with h5py.File(self.data, "a") as f:
            f.attrs["tokenizer"] = "hf:" + tokenizer
            f.attrs["tokenizer_sha256"] = digest
        proc, output = self.nss()
        self.assertEqual(proc.returncode, 0, output)
        self.assertIn("made with the model's " + tokenizer, output)


if __name__ == "__main__":
    unittest.main()
