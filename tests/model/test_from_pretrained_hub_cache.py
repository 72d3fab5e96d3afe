"""model.from_pretrained: Org/Name[@revision] from the local Hugging Face
cache, laid out by huggingface_hub's own download code (hub_cache_layout.py,
in the venv): the preflight's `model.pretrained` names the snapshot that
huggingface_hub's try_to_load_from_cache finds, under HF_HUB_CACHE and under
HF_HOME, by branch, tag, slashed ref and commit; a short run trains from the
cached name; nss_eval --model and nss_prepare_data --tokenizer take the
cached name too, with the snapshot's results; a model or revision the cache
lacks, and a blob deleted from it, are exit 4 on every rank naming the cache
and the download command."""
import json
import os
import shutil
import subprocess
import sys
import unittest

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import VENV_PYTHON, binary, mpirun, remove, scratch, write  # noqa: E402
import bpe_tokenizer  # noqa: E402
from hf_files import llama_config, random_llama_weights, write_model_dir  # noqa: E402

NSS = binary("nss_hpc")
LAYOUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hub_cache_layout.py")
REPO = "TinyOrg/tiny-llama"
REVISIONS = ["main", "v1.0", "refs/pr/1"]
# No variable but the one a test sets decides where the cache is.
CACHE_VARIABLES = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")


class FromPretrainedHubCacheTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(VENV_PYTHON):
            raise AssertionError("no venv at %s: run scripts/setup.sh (it creates the venv)" % VENV_PYTHON)
        cls.tmp = scratch("hub_cache")
        model = os.path.join(cls.tmp, "model")
        config = llama_config(hidden=32, intermediate=48, layers=2, heads=4, kv_heads=2, vocab=300)
        write_model_dir(model, config, random_llama_weights(config, seed=1, scale=0.05))
        bpe_tokenizer.train(VENV_PYTHON, os.path.join(model, "tokenizer.json"), 290, ["<s>", "</s>"])
        # HF_HOME's cache: <HF_HOME>/hub.
        cls.cache = os.path.join(cls.tmp, "hf_home", "hub")
        proc = subprocess.run([VENV_PYTHON, LAYOUT, cls.cache, REPO, model] + REVISIONS,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        cls.found = json.loads(proc.stdout)
        # The training data made with the model's own tokenizer (the preflight checks that).
        cls.data = os.path.join(cls.tmp, "train.h5")
        made = subprocess.run([binary("nss_prepare_data"), "--input", "/usr/share/common-licenses/GPL-3",
                               "--output", cls.data, "--tokenizer", model], capture_output=True, text=True,
                              timeout=120)
        assert made.returncode == 0, made.stderr

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def setUp(self):
        self.run_dir = os.path.join(self.tmp, "run_" + self.id().rsplit(".", 1)[1])
        self.yaml = write(os.path.join(self.tmp, "run.yaml"),
                          "model:\n  from_pretrained: %s\ndata:\n  path: %s\n  seq_len: 16\n"
                          "training:\n  global_batch_size: 2\n  micro_batch_size: 1\n"
                          "  max_steps: 2\n  warmup_steps: 1\ncheckpoint:\n  interval_steps: 2\n"
                          % (REPO, self.data))

    def tearDown(self):
        remove(self.run_dir)

    def nss(self, reference, cache_env, ranks=1, extra=("--preflight-only",)):
        env = {name: "" for name in CACHE_VARIABLES}
        env.update(cache_env)
        args = [NSS, self.yaml, "--set", "model.from_pretrained=" + reference,
                "--set", "run.output_dir=" + self.run_dir] + list(extra)
        proc = mpirun(ranks, args, timeout=240, env=env)
        return proc, proc.stdout + proc.stderr

    def pretrained_check(self):
        with open(os.path.join(self.run_dir, "preflight.json")) as f:
            report = json.load(f)
        return next(c for c in report["checks"] if c["id"] == "model.pretrained")

    def expect_snapshot(self, reference, revision, cache_env):
        remove(self.run_dir)
        proc, output = self.nss(reference, cache_env)
        self.assertEqual(proc.returncode, 0, output)
        check = self.pretrained_check()
        snapshot = os.path.dirname(self.found[revision]["config"])
        self.assertEqual(check["status"], "pass")
        self.assertTrue(check["message"].startswith(
            "%s (%s) resolved in the Hugging Face cache %s to %s: config.json, 1 weight file(s)"
            % (REPO, revision, self.cache, snapshot)), check["message"])
        with open(os.path.join(self.run_dir, "config.resolved.yaml")) as f:
            self.assertEqual(yaml.safe_load(f)["model"]["from_pretrained"], snapshot)

    def test_every_revision_resolves_to_the_snapshot_huggingface_hub_finds(self):
        hub_cache = {"HF_HUB_CACHE": self.cache}
        self.expect_snapshot(REPO, "main", hub_cache)
        self.expect_snapshot(REPO + "@v1.0", "v1.0", {"HF_HOME": os.path.dirname(self.cache)})
        self.expect_snapshot(REPO + "@refs/pr/1", "refs/pr/1", hub_cache)
        # By commit: the same snapshot as main, which names it.
        self.expect_snapshot(REPO + "@" + self.found["main"]["commit"], "main", hub_cache)

    def test_a_short_run_trains_from_the_cached_name(self):
        proc, output = self.nss(REPO, {"HF_HUB_CACHE": self.cache}, ranks=2, extra=())
        self.assertEqual(proc.returncode, 0, output)
        self.assertTrue(os.path.isdir(os.path.join(self.run_dir, "checkpoints", "step_00000002")),
                        output)

    def test_the_tools_take_the_cached_name(self):
        env = dict(os.environ, **{name: "" for name in CACHE_VARIABLES})
        env["HF_HUB_CACHE"] = self.cache
        snapshot = os.path.dirname(self.found["v1.0"]["config"])
        scores = []
        for model in (REPO + "@v1.0", snapshot):
            proc = subprocess.run([binary("nss_eval"), "--model", model, "--data", self.data, "--seq-len", "16",
                                   "--batches", "2", "--batch-size", "2"], capture_output=True, text=True,
                                  timeout=120, env=env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            scores.append(json.loads(proc.stdout.splitlines()[-1]))
        self.assertEqual(scores[0]["loss"], scores[1]["loss"])
        proc = subprocess.run([binary("nss_eval"), "--model", "TinyOrg/absent", "--data", self.data],
                              capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn("huggingface-cli download TinyOrg/absent", proc.stderr)
        tokens = []
        for tokenizer in (REPO, os.path.dirname(self.found["main"]["config"])):
            output = os.path.join(self.tmp, "tokens_%d.h5" % len(tokens))
            proc = subprocess.run([binary("nss_prepare_data"), "--input", self.yaml, "--output", output,
                                   "--tokenizer", tokenizer], capture_output=True, text=True, timeout=120, env=env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(output, "rb") as f:
                tokens.append(f.read())
        self.assertEqual(tokens[0], tokens[1])

    def test_what_the_cache_lacks_is_exit_4_on_every_rank(self):
        hub_cache = {"HF_HUB_CACHE": self.cache}
        for reference, expected in (
                ("TinyOrg/absent", ["'TinyOrg/absent' is not a local directory, and the Hugging "
                                    "Face cache %s (from HF_HUB_CACHE) has no models--TinyOrg--absent"
                                    % self.cache, "huggingface-cli download TinyOrg/absent`"]),
                (REPO + "@v2", ["no ref file refs/v2", "huggingface-cli download %s --revision v2`"
                                % REPO]),
                (REPO + "@", ["names no revision after '@'"])):
            for extra in (("--preflight-only",), ()):
                proc, output = self.nss(reference, hub_cache, ranks=2, extra=extra)
                self.assertEqual(proc.returncode, 4, output)
                for text in expected:
                    self.assertIn(text, output)
                self.assertEqual(output.count("nss_hpc: error:"), 1, output)

    def test_a_deleted_blob_is_exit_4_naming_the_link(self):
        cache = os.path.join(self.tmp, "damaged")
        shutil.copytree(self.cache, cache, symlinks=True)
        snapshot = os.path.dirname(self.found["main"]["config"]).replace(self.cache, cache)
        blob = os.path.realpath(os.path.join(snapshot, "model.safetensors"))
        os.remove(blob)
        proc, output = self.nss(REPO, {"HF_HUB_CACHE": cache})
        self.assertEqual(proc.returncode, 4, output)
        self.assertIn("model.safetensors links to ../../blobs/%s, which is missing"
                      % os.path.basename(blob), output)
        self.assertIn("huggingface-cli download %s`" % REPO, output)


if __name__ == "__main__":
    unittest.main()
