"""scripts/render_chat_prompts.py renders conversations exactly as
transformers' apply_chat_template(..., add_generation_prompt=True) does for
the real SmolLM2-135M-Instruct tokenizer (its chat template), passes text
prompts through, and ends bad input with exit 4 (file:line) or 2."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, VENV_PYTHON, VenvScratchDirTest  # noqa: E402

MODEL = os.environ.get("NSS_REAL_MODEL", os.path.join(SOURCE, "build", "models", "smollm2-135m-instruct"))
SCRIPT = os.path.join(SOURCE, "scripts", "render_chat_prompts.py")
CONVERSATIONS = [
    [{"role": "user", "content": "Write one record of the table."}],
    [{"role": "system", "content": "You write CSV rows."},
     {"role": "user", "content": "Zwei Zeilen, bitte: München, 東京 🙂"}],
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
     {"role": "user", "content": "  spaces\tand\nnewlines  "}],
]
REFERENCE = r"""
import json, sys
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
for line in sys.stdin:
    print(json.dumps(tokenizer.apply_chat_template(json.loads(line), tokenize=False, add_generation_prompt=True)))
"""


class RenderChatPromptsTest(VenvScratchDirTest):
    SCRATCH_TAG = "chat_prompts"

    def render(self, lines, model=MODEL):
        source = self.write("in.jsonl", "".join(json.dumps(x) + "\n" for x in lines).encode())
        proc = subprocess.run(["/usr/bin/python3", SCRIPT, "--model", model, "--input", source,
                               "--output", self.path("out.jsonl")], capture_output=True, text=True, timeout=120)
        return proc

    def test_conversations_render_like_transformers(self):
        if not os.path.isdir(MODEL):
            raise AssertionError("no model at %s: run scripts/setup.sh (it converts SmolLM2)" % MODEL)
        proc = self.render([{"messages": m} for m in CONVERSATIONS] + [{"prompt": "plain text"}])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(self.path("out.jsonl"), encoding="utf-8") as f:
            ours = [json.loads(line)["prompt"] for line in f]
        reference = subprocess.run([VENV_PYTHON, "-c", REFERENCE, MODEL], capture_output=True, text=True,
                                   timeout=240, input="".join(json.dumps(m) + "\n" for m in CONVERSATIONS))
        self.assertEqual(reference.returncode, 0, reference.stderr)
        self.assertEqual(ours[:3], [json.loads(line) for line in reference.stdout.splitlines()])
        self.assertTrue(ours[0].endswith("<|im_start|>assistant\n"), ours[0])
        self.assertEqual(ours[3], "plain text")

    def test_bad_input_names_the_line(self):
        proc = self.render([{"prompt": "fine"}, {"messages": "not a list"}])
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn("in.jsonl:2: a chat prompt needs", proc.stderr)
        self.assertFalse(os.path.exists(self.path("out.jsonl")))
        proc = self.render([{"messages": CONVERSATIONS[0]}], model=self.dir)  # no tokenizer_config.json
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("tokenizer_config.json", proc.stderr)


if __name__ == "__main__":
    unittest.main()
