"""Every family's exports, from its golden fixture (tests/fixtures/families)
as model.from_pretrained: two steps of LoRA on every projection and two of
full fine-tuning (Qwen2 on 2 ranks, the others on 1), each step exported by
nss_consolidate as a Hugging Face directory, merged (--merge-lora) and as a
PEFT adapter. For all six families: config.json names the family and says
every key of the fixture's config.json with the same value and JSON type
(transformers 5 validates types), leaving out only keys whose transformers
default is the fixture's value; the fixture's tokenizer files travel byte for
byte into all three directories; the weights carry the fixture's tensor
names, shapes and dtype (no lm_head when tied); the full export is the
checkpoint bit for bit and scores in nss_eval as the step does; the adapter
holds the step's adapters bit for bit under PEFT's names of the fixture's
projections; the merged export is W + (alpha/r) B A and scores as the step
and as the adapter on its base. A SmolLM3 with RoPE in every layer says so
(no_rope_layers). For Llama, Qwen2 and Mistral, which the venv's transformers
4.46 builds: transformers loads the full and merged exports bit for bit with
nss_eval's loss on the same windows (1e-6 relative) and AutoTokenizer loads
them as the fixture; PEFT loads the adapter on the fixture bit for bit with
the merged export's logits (1e-5 relative) and the LoRA step's loss (1e-6).
Qwen3, SmolLM3 and Gemma 3 need transformers 5: to load their exports by
hand, `python3 tests/model/test_family_exports.py --print-hf-check` prints
the loader this test runs in the venv (its docstring says its input), for the
torch venv of scripts/build_torch2.sh."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, os.path.join(HERE, "..", "checkpoint"))
from nss_e2e import SOURCE, VENV_PYTHON, binary, mpirun, remove, scratch, write, write_token_dataset  # noqa: E402
from ckpt_helpers import read_checkpoint, read_safetensors, step_dir  # noqa: E402

FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "families")
FAMILIES = {"llama": ("LlamaForCausalLM", "llama"), "qwen2": ("Qwen2ForCausalLM", "qwen2"),
            "mistral": ("MistralForCausalLM", "mistral"), "qwen3": ("Qwen3ForCausalLM", "qwen3"),
            "smollm3": ("SmolLM3ForCausalLM", "smollm3"), "gemma3": ("Gemma3ForCausalLM", "gemma3_text")}
LIVE = ("llama", "qwen2", "mistral")  # the families the venv's transformers 4.46 builds
RANKS = {"qwen2": 2}
PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json"]
STEPS, LORA_RANK, LORA_ALPHA = 2, 2, 4.0
SEQ_LEN, BATCHES, BATCH_SIZE = 24, 3, 2  # nss_eval's windows, as the fixtures' reference.json
TEXT = "Exports carry the tokenizer: caf\u00e9, 42."
# Fixture keys an export may leave out: transformers' default is the fixture's value.
DEFAULTED = {"pretraining_tp": 1, "use_bidirectional_attention": False,
             "attn_logit_softcapping": None, "final_logit_softcapping": None,
             "no_rope_layer_interval": 4}
# Keys whose exported value may differ from the fixture's: why it computes the same.
LOOSE = {"initializer_range": "initialises only weights a directory lacks; every weight is exported",
         "max_window_layers": "read only with use_sliding_window: true (false in both)",
         "sliding_window_pattern": "read only without layer_types, which both carry"}

HF_CHECK = r'''
"""Loads nss_consolidate exports with transformers (and an adapter with PEFT)
and prints one JSON object, {job name: result}. argv[1]: a JSON file with
"windows" (an .npy of token windows, one per row, each N inputs and the next
token), "text" and "jobs": [{"name", "kind": "model" | "peft", "path",
"logits": .npy output, "tokenizer_source"}]. A result: "loading" (missing,
unexpected and mismatched keys), "differing" (stored tensors that are not bit
for bit the loaded ones) and "unstored" (loaded adapter tensors the file
lacks), "loss" and "tokens" (the mean next-token loss over the windows),
"ids" and "source_ids" (the text by AutoTokenizer from the export and from
tokenizer_source; else "tokenizer_error"), or "error"."""
import json, os, sys, traceback
import numpy as np, torch, transformers
from safetensors.torch import load_file

def load(path):
    model, info = transformers.AutoModelForCausalLM.from_pretrained(path, output_loading_info=True)
    return model, {k: sorted(str(v) for v in info.get(k, [])) for k in ("missing_keys", "unexpected_keys",
                                                                        "mismatched_keys")}

def check(job, windows, text):
    if job["kind"] == "model":
        model, loading = load(job["path"])
        stored, loaded = load_file(os.path.join(job["path"], "model.safetensors")), model.state_dict()
    else:
        from peft import PeftModel
        from peft.utils import get_peft_model_state_dict
        with open(os.path.join(job["path"], "adapter_config.json")) as f:
            base, loading = load(json.load(f)["base_model_name_or_path"])
        model = PeftModel.from_pretrained(base, job["path"])
        stored, loaded = load_file(os.path.join(job["path"], "adapter_model.safetensors")), \
            get_peft_model_state_dict(model)
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=windows[:, :-1]).logits
    np.save(job["logits"], logits.numpy())
    loss = torch.nn.functional.cross_entropy(logits.double().reshape(-1, logits.shape[-1]),
                                             windows[:, 1:].reshape(-1))
    result = {"loading": loading, "loss": loss.item(), "tokens": windows[:, 1:].numel(),
              "differing": sorted(n for n, v in stored.items() if n not in loaded or not torch.equal(loaded[n], v)),
              "unstored": sorted(n for n in loaded if n not in stored),
              "versions": {"transformers": transformers.__version__, "torch": torch.__version__}}
    if job.get("tokenizer_source"):
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(job["path"])
            source = transformers.AutoTokenizer.from_pretrained(job["tokenizer_source"])
            result.update(ids=tokenizer(text)["input_ids"], source_ids=source(text)["input_ids"])
        except Exception as e:
            result["tokenizer_error"] = repr(e)
    return result

def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    windows = torch.from_numpy(np.load(spec["windows"]))
    results = {}
    for job in spec["jobs"]:
        try:
            results[job["name"]] = check(job, windows, spec["text"])
        except Exception:
            results[job["name"]] = {"error": traceback.format_exc()}
    print(json.dumps(results))

main()
'''


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def legacy_keys(config):
    """The fixture's config.json (transformers 5) under the keys an export
    writes: rope_parameters as rope_theta/rope_scaling (and Gemma 3's
    rope_local_base_freq), dtype as torch_dtype."""
    out = dict(config)
    rope = out.pop("rope_parameters", None)
    if rope is not None:
        per_type = "full_attention" in rope
        full = rope["full_attention"] if per_type else rope
        assert full.get("rope_type") == "default", rope  # the fixtures scale no RoPE
        out["rope_theta"], out["rope_scaling"] = full["rope_theta"], None
        if per_type and "sliding_attention" in rope:
            out["rope_local_base_freq"] = rope["sliding_attention"]["rope_theta"]
    if "dtype" in out:
        out["torch_dtype"] = out.pop("dtype")
    if "_sliding_window_pattern" in out:
        out["sliding_window_pattern"] = out.pop("_sliding_window_pattern")
    return out


def config_differences(fixture, exported):
    """(keys the export writes otherwise than the fixture, fixture keys it
    leaves out whose transformers default is not the fixture's value)."""
    differing, missing = [], []
    for key, want in sorted(legacy_keys(fixture).items()):
        if key in exported:
            if key not in LOOSE and json.dumps(exported[key], sort_keys=True) != json.dumps(want, sort_keys=True):
                differing.append("%s: %s, fixture %s" % (key, json.dumps(exported[key]), json.dumps(want)))
        elif key != "transformers_version" and (key not in DEFAULTED or DEFAULTED[key] != want):
            missing.append("%s (fixture %s)" % (key, json.dumps(want)))
    return differing, missing


def read_json(path):
    with open(path) as f:
        return json.load(f)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


class FamilyExportsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(VENV_PYTHON):
            raise AssertionError("no venv at %s: run scripts/setup.sh (it creates the venv)" % VENV_PYTHON)
        cls.tmp = scratch("family_exports")
        cls.addClassCleanup(remove, cls.tmp)
        cls.data = write_token_dataset(os.path.join(cls.tmp, "train.h5"), vocab_size=258)
        tokenizer = os.path.join(FIXTURES, "llama", "tokenizer.json")  # the same file in every fixture
        with h5py.File(cls.data, "a") as h5:
            h5.attrs["tokenizer"] = "hf:" + tokenizer
            h5.attrs["tokenizer_sha256"] = hashlib.sha256(read_file(tokenizer)).hexdigest()
        cls.runs = {family: cls.train_and_export(family) for family in FAMILIES}
        cls.hf = cls.load_with_transformers()

    @classmethod
    def tool(cls, *args):
        proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, "%s: exit %d\n%s" % (args, proc.returncode, proc.stdout + proc.stderr)
        return proc.stdout

    @classmethod
    def nss_eval(cls, model, *args):
        out = cls.tool(binary("nss_eval"), "--model", model, *args, "--data", cls.data, "--seq-len", SEQ_LEN,
                       "--batches", BATCHES, "--batch-size", BATCH_SIZE)
        return json.loads(out.splitlines()[-1])

    @classmethod
    def train(cls, fixture, run_dir, ranks, *sets):
        """nss_hpc from `fixture` with LoRA on every projection (`sets` as
        --set), into run_dir; returns the step it saved last."""
        config = write(run_dir + ".yaml", (
            "model:\n  from_pretrained: %s\ndata:\n  path: %s\n  seq_len: %d\n"
            "training:\n  global_batch_size: 2\n  micro_batch_size: 1\n  max_steps: %d\n  warmup_steps: 1\n"
            "  lr: 0.01\n  lora:\n    enabled: true\n    rank: %d\n    alpha: %g\n    targets: [%s]\n"
            "checkpoint:\n  interval_steps: %d\n") % (fixture, cls.data, SEQ_LEN, STEPS, LORA_RANK, LORA_ALPHA,
                                                          ", ".join(PROJECTIONS), STEPS))
        args = [binary("nss_hpc"), config, "--set", "run.output_dir=" + run_dir]
        proc = mpirun(ranks, args + [a for s in sets for a in ("--set", s)], timeout=120)
        assert proc.returncode == 0, "%s: exit %d\n%s" % (run_dir, proc.returncode, proc.stdout + proc.stderr)
        return step_dir(os.path.join(run_dir, "checkpoints"), STEPS)

    @classmethod
    def export(cls, step, output, *args):
        cls.tool(binary("nss_consolidate"), step, "--output", output, "--format", "hf", *args)
        return output

    @classmethod
    def train_and_export(cls, family):
        """The family's runs, exports and nss_eval scores: {name: path or score}."""
        fixture = os.path.join(FIXTURES, family)
        root = os.path.join(cls.tmp, family)
        os.makedirs(root)
        ranks = RANKS.get(family, 1)
        run = {"fixture": fixture, "lora_step": cls.train(fixture, os.path.join(root, "lora_run"), ranks),
               "full_step": cls.train(fixture, os.path.join(root, "full_run"), ranks, "training.lora.enabled=false")}
        run["full"] = cls.export(run["full_step"], os.path.join(root, "full_hf"))
        run["merged"] = cls.export(run["lora_step"], os.path.join(root, "merged_hf"), "--merge-lora")
        run["adapter"] = cls.export(run["lora_step"], os.path.join(root, "adapter_hf"))
        run["eval"] = {"base": cls.nss_eval(fixture), "full_step": cls.nss_eval(run["full_step"]),
                       "full": cls.nss_eval(run["full"]), "lora_step": cls.nss_eval(run["lora_step"]),
                       "merged": cls.nss_eval(run["merged"]),
                       "adapter": cls.nss_eval(run["adapter"], "--base", fixture)}
        return run

    @classmethod
    def windows(cls):
        """nss_eval's windows as an .npy: i = tokens[i*N, i*N + N + 1), i < batches x batch size."""
        with h5py.File(cls.data, "r") as f:
            tokens = f["tokens"][:BATCHES * BATCH_SIZE * SEQ_LEN + 1].astype(np.int64)
        path = os.path.join(cls.tmp, "windows.npy")
        np.save(path, np.stack([tokens[i * SEQ_LEN:(i + 1) * SEQ_LEN + 1] for i in range(BATCHES * BATCH_SIZE)]))
        return path

    @classmethod
    def load_with_transformers(cls):
        """HF_CHECK's results in the venv for the live families' exports: {family: {export: result}}."""
        jobs = []
        for family in LIVE:
            run = cls.runs[family]
            for name, kind in (("full", "model"), ("merged", "model"), ("adapter", "peft")):
                jobs.append({"name": family + "/" + name, "kind": kind, "path": run[name],
                             "logits": os.path.join(cls.tmp, family, name + "_logits.npy"),
                             "tokenizer_source": run["fixture"] if kind == "model" else None})
        spec = write(os.path.join(cls.tmp, "hf_check.json"), json.dumps({
            "windows": cls.windows(), "text": TEXT, "jobs": jobs}))
        script = write(os.path.join(cls.tmp, "hf_check.py"), HF_CHECK)
        proc = subprocess.run([VENV_PYTHON, script, spec], capture_output=True, text=True, timeout=240)
        assert proc.returncode == 0, proc.stderr
        results = json.loads(proc.stdout.splitlines()[-1])
        loaded = {family: {} for family in LIVE}
        for job in jobs:
            family, name = job["name"].split("/")
            loaded[family][name] = dict(results[job["name"]], logits=job["logits"])
        return loaded

    def fixture_weights(self, run):
        return read_safetensors(os.path.join(run["fixture"], "model.safetensors"))[2]

    def test_config_json_says_the_family_as_the_fixture_does(self):
        for family, run in self.runs.items():
            with self.subTest(family=family):
                fixture = read_json(os.path.join(run["fixture"], "config.json"))
                exported = read_json(os.path.join(run["full"], "config.json"))
                self.assertEqual(exported, read_json(os.path.join(run["merged"], "config.json")))
                architecture, model_type = FAMILIES[family]
                self.assertEqual((exported["architectures"], exported["model_type"]), ([architecture], model_type))
                differing, missing = config_differences(fixture, exported)
                print("%s config.json: %d keys; differing from the fixture: %s; left out: %s" % (
                    family, len(exported), differing or "none", missing or "none"))
                self.assertEqual(differing, [], "%s: exported config.json keys differ from the fixture's" % family)
                self.assertEqual(missing, [], "%s: fixture keys the export leaves to transformers' defaults, "
                                              "which differ from the fixture's values" % family)

    def test_an_export_whose_base_config_is_gone_warns_and_writes_null_ids(self):
        base = os.path.join(self.tmp, "vanishing_base")
        shutil.copytree(os.path.join(FIXTURES, "qwen3"), base)
        step = self.train(base, os.path.join(self.tmp, "vanishing_run"), 1, "training.lora.enabled=false")
        os.remove(os.path.join(base, "config.json"))
        output = os.path.join(self.tmp, "vanishing_hf")
        proc = subprocess.run([binary("nss_consolidate"), step, "--output", output, "--format", "hf"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("token ids could not be read (%s" % os.path.join(base, "config.json"), proc.stderr)
        self.assertIn("set them there by hand", proc.stderr)
        exported = read_json(os.path.join(output, "config.json"))
        self.assertEqual([exported[k] for k in ("bos_token_id", "eos_token_id", "pad_token_id")], [None] * 3)

    def test_tokenizer_files_travel_with_every_export(self):
        for family, run in self.runs.items():
            with self.subTest(family=family):
                present = [n for n in TOKENIZER_FILES if os.path.exists(os.path.join(run["fixture"], n))]
                self.assertIn("tokenizer.json", present)
                for name in ("full", "merged", "adapter"):
                    weights = ["adapter_config.json", "adapter_model.safetensors"] if name == "adapter" else \
                        ["config.json", "model.safetensors"]
                    self.assertEqual(sorted(os.listdir(run[name])), sorted(weights + present), name)
                    for file_name in present:
                        self.assertEqual(read_file(os.path.join(run[name], file_name)),
                                         read_file(os.path.join(run["fixture"], file_name)), (name, file_name))

    def test_weights_have_the_fixture_names_shapes_and_dtype(self):
        for family, run in self.runs.items():
            with self.subTest(family=family):
                _, fixture_header, fixture = read_safetensors(os.path.join(run["fixture"], "model.safetensors"))
                tied = read_json(os.path.join(run["fixture"], "config.json"))["tie_word_embeddings"]
                for name in ("full", "merged"):
                    metadata, header, tensors = read_safetensors(os.path.join(run[name], "model.safetensors"))
                    self.assertEqual(metadata, {"format": "pt"})
                    self.assertEqual(sorted(tensors), sorted(fixture), name)
                    self.assertEqual("lm_head.weight" in tensors, not tied, name)
                    for tensor, value in fixture.items():
                        self.assertEqual(tensors[tensor].shape, value.shape, (name, tensor))
                        self.assertEqual(header[tensor]["dtype"], fixture_header[tensor]["dtype"], (name, tensor))

    def test_full_export_is_the_checkpoint_bit_for_bit(self):
        for family, run in self.runs.items():
            with self.subTest(family=family):
                _, stored = read_checkpoint(run["full_step"])
                model = {n: v for n, v in stored.items() if not n.startswith("optimizer.")}
                exported = read_safetensors(os.path.join(run["full"], "model.safetensors"))[2]
                self.assertEqual(sorted(exported), sorted(model))
                for name, value in model.items():
                    self.assertTrue(same_bits(exported[name], value), name)
                fixture = self.fixture_weights(run)
                self.assertTrue(any(not same_bits(fixture[n], v) for n, v in model.items()),
                                "the full run left every weight as it was: the comparisons would be vacuous")

    def test_adapter_is_in_peft_layout_on_the_fixture_modules(self):
        for family, run in self.runs.items():
            with self.subTest(family=family):
                config = read_json(os.path.join(run["adapter"], "adapter_config.json"))
                self.assertEqual((config["peft_type"], config["task_type"], config["r"], config["lora_alpha"]),
                                 ("LORA", "CAUSAL_LM", LORA_RANK, LORA_ALPHA))
                self.assertEqual(config["target_modules"], PROJECTIONS)
                self.assertEqual(config["base_model_name_or_path"], os.path.realpath(run["fixture"]))
                fixture = self.fixture_weights(run)
                _, stored = read_checkpoint(run["lora_step"])
                _, header, adapters = read_safetensors(os.path.join(run["adapter"], "adapter_model.safetensors"))
                want = {}
                for name, value in fixture.items():
                    if name.rsplit(".", 2)[-2] in PROJECTIONS and name.endswith(".weight"):
                        out, inp = value.shape
                        want["base_model.model." + name[:-len("weight")] + "lora_A.weight"] = (LORA_RANK, inp)
                        want["base_model.model." + name[:-len("weight")] + "lora_B.weight"] = (out, LORA_RANK)
                self.assertEqual(sorted(adapters), sorted(want))
                for name, shape in want.items():
                    self.assertEqual((adapters[name].shape, header[name]["dtype"]), (shape, "F32"), name)
                    self.assertTrue(same_bits(adapters[name], stored[name[len("base_model.model."):]]), name)
                self.assertGreater(max(np.abs(v).max() for n, v in adapters.items() if "lora_B" in n), 1e-4,
                                   "training left every lora_B at zero: the comparisons would be vacuous")

    def test_merged_export_is_the_base_plus_scaled_adapters(self):
        for family, run in self.runs.items():
            with self.subTest(family=family):
                fixture = self.fixture_weights(run)
                _, stored = read_checkpoint(run["lora_step"])
                merged = read_safetensors(os.path.join(run["merged"], "model.safetensors"))[2]
                adapted = 0
                for name, base in fixture.items():
                    module = name[:-len(".weight")]
                    if module + ".lora_A.weight" not in stored:
                        self.assertTrue(same_bits(merged[name], base), name)
                        continue
                    a, b = (stored[module + ".lora_%s.weight" % x].astype(np.float64) for x in "AB")
                    want = base.astype(np.float64) + LORA_ALPHA / LORA_RANK * (b @ a)
                    np.testing.assert_allclose(merged[name], want, rtol=1e-6, atol=1e-7, err_msg=name)
                    adapted += 1
                self.assertEqual(adapted, len(PROJECTIONS) * read_json(
                    os.path.join(run["fixture"], "config.json"))["num_hidden_layers"])

    def test_nss_eval_scores_every_export_as_its_step(self):
        for family, run in self.runs.items():
            with self.subTest(family=family):
                scores = run["eval"]
                print("%s nss_eval: fixture %.9f | full step %.9f, export %.9f | LoRA step %.9f, merged %.9f, "
                      "adapter on the fixture %.9f" % (family, scores["base"]["loss"], scores["full_step"]["loss"],
                                                       scores["full"]["loss"], scores["lora_step"]["loss"],
                                                       scores["merged"]["loss"], scores["adapter"]["loss"]))
                self.assertEqual(len({s["tokens"] for s in scores.values()}), 1, scores)
                self.assertEqual(scores["full"]["loss"], scores["full_step"]["loss"])
                self.assertEqual(scores["adapter"]["loss"], scores["lora_step"]["loss"])
                self.assertAlmostEqual(scores["merged"]["loss"] / scores["lora_step"]["loss"], 1.0, delta=1e-6)
                for trained in ("full_step", "lora_step"):
                    self.assertGreater(abs(scores[trained]["loss"] / scores["base"]["loss"] - 1.0), 1e-4,
                                       "%s scores as the fixture: the comparisons would be vacuous" % trained)

    def test_smollm3_with_rope_in_every_layer_says_so(self):
        # Without "no_rope_layers", SmolLM3Config turns RoPE off in every
        # no_rope_layer_interval-th (4th) layer: the export must list it.
        base = os.path.join(self.tmp, "smollm3_rope_everywhere")
        shutil.copytree(os.path.join(FIXTURES, "smollm3"), base)
        config = read_json(os.path.join(base, "config.json"))
        config["no_rope_layers"] = [1] * config["num_hidden_layers"]
        write(os.path.join(base, "config.json"), json.dumps(config, indent=2))
        step = self.train(base, base + "_run", 1, "training.lora.enabled=false")
        exported = read_json(os.path.join(self.export(step, base + "_hf"), "config.json"))
        self.assertEqual(exported.get("no_rope_layers"), config["no_rope_layers"],
                         "SmolLM3 with RoPE in every layer: transformers makes layer 4 NoPE without the key")

    def expect_loaded(self, result, what):
        self.assertNotIn("error", result, "%s: %s" % (what, result.get("error")))
        self.assertEqual(result["loading"], {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []},
                         what)
        self.assertEqual(result["differing"], [], "%s: tensors not loaded bit for bit" % what)

    def test_transformers_loads_the_exports_bit_for_bit_and_scores_as_nss_eval(self):
        for family in LIVE:
            with self.subTest(family=family):
                run, loaded = self.runs[family], self.hf[family]
                for name in ("full", "merged"):
                    result = loaded[name]
                    self.expect_loaded(result, "%s %s" % (family, name))
                    ours = run["eval"][name]
                    print("%s %s: transformers %s %.9f, nss_eval %.9f" % (
                        family, name, result["versions"]["transformers"], result["loss"], ours["loss"]))
                    self.assertEqual(result["tokens"], ours["tokens"])
                    self.assertAlmostEqual(result["loss"] / ours["loss"], 1.0, delta=1e-6, msg=(result["loss"], ours))
                    self.assertNotIn("tokenizer_error", result, result.get("tokenizer_error"))
                    self.assertGreater(len(result["source_ids"]), 5)
                    self.assertEqual(result["ids"], result["source_ids"], "AutoTokenizer of the %s export" % name)

    def test_peft_loads_the_adapter_with_the_merged_logits(self):
        for family in LIVE:
            with self.subTest(family=family):
                run, loaded = self.runs[family], self.hf[family]
                peft = loaded["adapter"]
                self.expect_loaded(peft, family + " adapter")
                self.assertEqual(peft["unstored"], [], "adapter tensors PEFT made that the export lacks")
                self.assertNotIn("error", loaded["merged"], loaded["merged"].get("error"))
                ours, theirs = np.load(peft["logits"]), np.load(loaded["merged"]["logits"])
                worst = np.abs(ours - theirs).max() / np.abs(theirs).max()
                step = run["eval"]["lora_step"]
                print("%s adapter: PEFT loss %.9f, LoRA step in nss_eval %.9f; logits against the merged "
                      "export's: max difference %.3g of the largest" % (family, peft["loss"], step["loss"], worst))
                self.assertLessEqual(worst, 1e-5)
                self.assertAlmostEqual(peft["loss"] / step["loss"], 1.0, delta=1e-6, msg=(peft["loss"], step))


if __name__ == "__main__":
    if sys.argv[1:] == ["--print-hf-check"]:
        sys.stdout.write(HF_CHECK)
    else:
        unittest.main()
