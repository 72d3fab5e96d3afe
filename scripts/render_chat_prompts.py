#!/usr/bin/python3
"""Renders chat prompts to text for nss_generate, with the model's own chat template.

Reads a JSONL file whose lines hold either {"messages": [{"role", "content"}, ...]}
(a conversation that the model should continue: rendered with the template
of the model directory's tokenizer_config.json and add_generation_prompt) or
{"prompt": "..."} (already text, passed through), and writes one
{"prompt": "..."} line per input line, in order. It uses the renderer of
`prepare_data_hf.py --format chat` (scripts/data_inputs.py: Jinja2 sandboxed,
Hugging Face's conventions), so a fine-tuned chat model sees prompts exactly
as its training data rendered them, and nss_generate needs no template engine.

Exit codes: 2 for a bad command line or a model directory without a chat
template, 4 for an input line that is not a conversation or a template that
refuses it (naming file:line).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data_inputs import DataError, UsageError, chat_renderer, chat_template_of, jsonl_records  # noqa: E402

EXIT_USAGE = 2
EXIT_DATA = 4


def conversation(record, path, number):
    messages = record.get("messages") if isinstance(record, dict) else None
    if not isinstance(messages, list) or not messages or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages):
        raise DataError('%s:%d: a chat prompt needs "messages": [{"role": ..., "content": ...}, ...] '
                        'or a string "prompt"' % (path, number))
    return messages


def render_prompts(model_dir, path):
    """The prompt text of every line of `path`, in order."""
    from jinja2.exceptions import TemplateError
    render = None
    prompts = []
    for number, record in jsonl_records(path):
        if isinstance(record, dict) and isinstance(record.get("prompt"), str):
            prompts.append(record["prompt"])
            continue
        messages = conversation(record, path, number)
        if render is None:
            render = chat_renderer(*chat_template_of(os.path.join(model_dir, "tokenizer_config.json")))
        try:
            prompts.append(render(messages, True))
        except TemplateError as e:
            raise DataError("%s:%d: the chat template refused the conversation: %s" % (path, number, e))
    return prompts


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="model directory holding tokenizer_config.json")
    parser.add_argument("--input", required=True, help="JSONL of {\"messages\": [...]} or {\"prompt\": ...}")
    parser.add_argument("--output", required=True, help="JSONL of {\"prompt\": ...} to write")
    args = parser.parse_args(argv)
    try:
        if not os.path.isdir(args.model):
            raise UsageError("--model %s is not a directory" % args.model)
        if not os.path.isfile(args.input):
            raise DataError("--input %s is not a regular file" % args.input)
        prompts = render_prompts(args.model, args.input)
        temporary = args.output + ".tmp.%d" % os.getpid()
        with open(temporary, "w", encoding="utf-8") as out:
            for prompt in prompts:
                out.write(json.dumps({"prompt": prompt}, ensure_ascii=False) + "\n")
        os.replace(temporary, args.output)
    except UsageError as e:
        print("render_chat_prompts: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    except DataError as e:
        print("render_chat_prompts: error: [data] %s" % e, file=sys.stderr)
        return EXIT_DATA
    except OSError as e:
        print("render_chat_prompts: error: cannot write %s: %s" % (args.output, e.strerror), file=sys.stderr)
        return EXIT_USAGE
    print("render_chat_prompts: %d prompts written to %s" % (len(prompts), args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
