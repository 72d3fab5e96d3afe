"""A byte-level BPE tokenizer trained with Hugging Face `tokenizers` on the
license texts every Debian machine has, for tests that need a real
tokenizer.json (nothing is downloaded). Runs the venv's Python, since
`tokenizers` lives there."""
import json
import os
import subprocess

CORPUS = [os.path.join("/usr/share/common-licenses", n) for n in ("GPL-3", "Apache-2.0")]

_TRAINER = r"""
import json, sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
tokenizer = Tokenizer(models.BPE())
tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tokenizer.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=int(sys.argv[2]), special_tokens=json.loads(sys.argv[3]),
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tokenizer.train(sys.argv[4:], trainer)
tokenizer.save(sys.argv[1])
"""

_DECODER = r"""
import json, sys
from tokenizers import Tokenizer
tokenizer = Tokenizer.from_file(sys.argv[1])
print(json.dumps([tokenizer.decode(ids, skip_special_tokens=False) for ids in json.load(open(sys.argv[2]))]))
"""


def train(venv_python, tokenizer_json, vocab_size, special_tokens):
    """Writes `tokenizer_json`; raises AssertionError with the venv's stderr on failure."""
    result = subprocess.run([venv_python, "-c", _TRAINER, tokenizer_json, str(vocab_size), json.dumps(special_tokens)]
                            + CORPUS, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    return tokenizer_json


def decode(venv_python, tokenizer_json, documents, scratch_file):
    """The text of each list of ids in `documents` (special tokens kept)."""
    with open(scratch_file, "w") as f:
        json.dump(documents, f)
    result = subprocess.run([venv_python, "-c", _DECODER, tokenizer_json, scratch_file], capture_output=True,
                            text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
