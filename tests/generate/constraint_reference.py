"""The reference side of the constraint parity test; runs in the venv
(regex, outlines-core, tokenizers).

  constraint_reference.py SCHEMA_JSON GROUPED TOKENIZER_JSON|byte-level PREFIXES.jsonl

Prints {"comparable": [...]} (the ids compared), then for each prefix
({"ids": [...]}, tokens with text only) {"regex": [...], "outlines": [...]}:
the ids allowed after it by a regular expression of the records grammar
written here from the schema — by brute force, each token's text appended
to the prefix's and tried with the regex package's partial match — and by
outlines-core's Index of the same expression (null where its index has no
state for the prefix: it matches leftmost-first, so it ends a match where a
longer one could go on). Tokens whose text is not
valid UTF-8 (pieces of a character) are left out of both: a str-level
regex cannot place them. The end token is the tokenizer's last id."""
import json
import re as stdlib_re
import sys

import regex
from outlines_core import Index, Vocabulary

CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\bfnrt]|\\u00[01][0-9a-f])'


def json_string(text):
    out = '"'
    for c in text:
        out += {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}.get(
            c, c if ord(c) >= 0x20 else "\\u%04x" % ord(c))
    return out + '"'


def number(column):
    digits = column["max_integer_digits"]
    if digits == 0:
        return None
    out = r"-?(?:0|[1-9][0-9]{0,%d})" % (min(digits, 200) - 1)
    if column["max_fraction_digits"]:
        out += r"(?:\.[0-9]{1,%d})?" % column["max_fraction_digits"]
    if column["max_exponent_digits"]:
        out += r"(?:[eE][+-]?[0-9]{1,%d})?" % min(column["max_exponent_digits"], 2)
    return out


def value(column):
    options = []
    chars = 0 if column["type"] == "number" else column["max_chars"]
    if chars or column["empty_cells"]:
        low = 0 if column["empty_cells"] else 1
        if column.get("digit_strings"):
            spellings = [stdlib_re.escape(json_string(v)[1:-1]) for v in column.get("missing_values", [])
                         if not v[:1].isdigit()]
            options.append('"(?:[0-9]{1,%d}%s)"' % (chars, "".join("|" + s for s in spellings)))
            if column["empty_cells"]:
                options.append('""')
        else:
            options.append('"%s{%d,%d}"' % (CHAR, low, chars) if chars else '""')
    if number(column):
        options.append(number(column))
    return "(?:%s)" % "|".join(options)


def grammar(schema, grouped):
    parts = []
    for i, column in enumerate(schema["columns"]):
        parts.append(stdlib_re.escape(("," if i else "{") + json_string(column["name"]) + ":") + value(column))
    record = "".join(parts) + r"\}"
    return "%s(?:\n%s)*" % (record, record) if grouped else record


def texts(source):
    """(texts by id, end id): each token's text, None for specials and pieces of characters."""
    if source == "byte-level":
        return [chr(b) if b < 0x80 else None for b in range(256)] + [None, None], 257
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(source)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    special = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
    out = []
    for i in range(size):
        token = tokenizer.id_to_token(i)
        text = tokenizer.decode([i], skip_special_tokens=False) if token not in special else None
        out.append(text if text and "\ufffd" not in text else None)
    return out, size - 1


def main(schema_path, grouped, source, prefixes_path):
    with open(schema_path) as f:
        schema = json.load(f)
    pattern = grammar(schema, grouped == "1")
    compiled = regex.compile(pattern)
    token_texts, end = texts(source)
    vocabulary = {}
    for i, text in enumerate(token_texts):
        if text is not None and i != end:
            vocabulary.setdefault(text, []).append(i)
    index = Index(pattern, Vocabulary(end, vocabulary))
    with open(prefixes_path) as f:
        prefixes = [json.loads(line)["ids"] for line in f]
    print(json.dumps({"comparable": [i for i, text in enumerate(token_texts) if text is not None] + [end]}))
    for ids in prefixes:
        prefix = "".join(token_texts[i] for i in ids)
        allowed = [i for i, text in enumerate(token_texts)
                   if text is not None and compiled.fullmatch(prefix + text, partial=True)]
        if compiled.fullmatch(prefix):
            allowed.append(end)
        state = index.get_initial_state()
        for i in ids:
            state = None if state is None else index.get_next_state(state, i)
        outlines = None if state is None else sorted(index.get_allowed_tokens(state))
        print(json.dumps({"regex": sorted(allowed), "outlines": outlines}))


if __name__ == "__main__":
    main(*sys.argv[1:])
