"""The inputs of scripts/prepare_data_hf.py that are not about the tokenizer.

CSV rows as JSON objects, and the examples of the sft, records and chat
formats exactly as docs/data.md specifies them (nss_prepare_data implements
the same contract in C++ for sft and records: the same prompts, completions,
templates and schema).
"""
import csv
import json
import re

EXAMPLE_FORMATS = ("sft", "records", "chat")
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
DIGITS = re.compile(r"[0-9]+")
# pandas' default missing-value spellings, as lib/core/missing_cell.cpp lists them.
MISSING_SPELLINGS = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
RECORDS_TEMPLATE = "Generate one record of the table as a JSON object with the fields {columns}.\n"
GROUPED_RECORDS_TEMPLATE = ("Generate the records of one {group_by} group as JSON objects, one per line, "
                            "with the fields {columns}.\n")
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


class DataError(Exception):
    """An input problem the user can fix (exit 4)."""


class UsageError(Exception):
    """A bad command line (exit 2)."""


def json_string(text):
    return json.dumps(text, ensure_ascii=False)


def csv_row_to_json(header, row):
    cells = [json_string(k) + ":" + (v if JSON_NUMBER.match(v) else json_string(v)) for k, v in zip(header, row)]
    return "{" + ",".join(cells) + "}"


def csv_rows(path):
    """(header, row) for each row of a CSV file; DataError for an empty file, a repeated column or a ragged row."""
    with open(path, "r", encoding="utf-8-sig", errors="replace", newline="") as f:
        reader = csv.reader(f, strict=True)
        header, rows, line = None, 0, 1
        try:
            for row in reader:
                start, line = line, reader.line_num + 1
                if not row:
                    continue
                if header is None:
                    unnamed = [i + 1 for i, name in enumerate(row) if not name.strip(" \t")]
                    if unnamed:
                        raise DataError("%s:%d: the CSV header's column %d has no name (name every column: a record's "
                                        "fields are keyed by the column names)" % (path, start, unnamed[0]))
                    if len(set(row)) != len(row):
                        raise DataError("%s:%d: the CSV header names a column twice" % (path, start))
                    header = row
                    continue
                if len(row) != len(header):
                    raise DataError("%s:%d: CSV row has %d fields, the header has %d" % (path, start, len(row), len(header)))
                rows += 1
                yield header, row
        except csv.Error as e:
            raise DataError("%s:%d: %s" % (path, line, e))
    if header is None:
        raise DataError("input %s is empty (no CSV header)" % path)
    if rows == 0:
        raise DataError("input %s has a CSV header but no rows" % path)


def jsonl_records(path):
    """(line number, record) for each non-blank line of a JSONL file."""
    with open(path, "r", encoding="utf-8-sig", errors="strict", newline="") as f:
        try:
            lines = list(f)
        except UnicodeDecodeError as e:
            raise DataError("%s: invalid UTF-8 (%s)" % (path, e))
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        if not line.strip(" \t"):
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError("%s:%d: invalid JSON: %s" % (path, number, e))


def sft_examples(path):
    """(prompt, completion) per line of {"prompt": ..., "completion": ...}."""
    count = 0
    for number, record in jsonl_records(path):
        for key in ("prompt", "completion"):
            if not isinstance(record, dict) or not isinstance(record.get(key), str):
                raise DataError('%s:%d: an sft record needs a string "%s"' % (path, number, key))
        count += 1
        yield record["prompt"], record["completion"]
    if count == 0:
        raise DataError("input %s holds no sft records" % path)


def render_prompt_template(template, columns, group_by, order_by):
    values = {"columns": ", ".join(columns), "group_by": group_by or "", "order_by": order_by or ""}

    def fill(match):
        text = match.group(0)
        if text in ("{{", "}}"):
            return text[0]
        if text == "}":
            raise UsageError("the prompt template has an unmatched '}'; write a literal brace as }} (or {{)")
        name = match.group(1)
        if name not in values:
            shown = "{" + (name or "") + ("}" if name is not None else "")
            raise UsageError("the prompt template has an unknown placeholder '%s'; use {columns}, {group_by} or "
                             "{order_by}; write literal braces as {{ }}" % shown)
        return values[name]

    return PLACEHOLDER.sub(fill, template)


def records_table(path):
    """(header, rows) of a records CSV; DataError for a header without rows."""
    header, rows = None, []
    for header, row in csv_rows(path):
        rows.append(row)
    return header, rows


# A text column of few distinct values (nss_generate --constrain-categories
# offers only these): at most 32, and at most half its non-empty cells.
MAX_CATEGORIES = 32


def value_bounds(values):
    """The longest values of a column's non-empty cells, as nss_prepare_data
    records them: characters of a cell written as a string, digits of each
    part of one written as a number (nss_generate --constrain bounds by them)."""
    bounds = {"max_chars": 0, "max_integer_digits": 0, "max_fraction_digits": 0, "max_exponent_digits": 0}
    for cell in values:
        if not JSON_NUMBER.match(cell):
            characters = sum(1 for b in cell.encode("utf-8", "surrogateescape") if b & 0xC0 != 0x80)
            bounds["max_chars"] = max(bounds["max_chars"], characters)
            continue
        mantissa, _, exponent = cell.lstrip("-").replace("E", "e").partition("e")
        integer, _, fraction = mantissa.partition(".")
        for key, part in (("max_integer_digits", integer), ("max_fraction_digits", fraction),
                          ("max_exponent_digits", exponent.lstrip("+-"))):
            bounds[key] = max(bounds[key], len(part))
    return bounds


def record_examples(path, prompt_template, group_by, order_by, table=None):
    """(preparation attributes, [(prompt, completion)]) of a records CSV, or of
    its (header, rows) `table` when given; the schema is inferred from those rows."""
    if order_by and not group_by:
        raise UsageError("--order-by %s without --group-by: order_by orders the rows inside each group" % order_by)
    header, rows = table if table is not None else records_table(path)
    for flag, column in (("--group-by", group_by), ("--order-by", order_by)):
        if column and column not in header:
            raise UsageError("%s %s: %s has no such column; choose one of: %s" % (flag, column, path, ", ".join(header)))
    schema = []
    for c, name in enumerate(header):
        cells = [row[c] for row in rows]
        values = [cell for cell in cells if cell]
        number = bool(values) and all(JSON_NUMBER.match(cell) for cell in values)
        bounds = value_bounds(values)
        distinct = sorted(set(values), key=lambda v: v.encode("utf-8", "surrogateescape"))
        few = (not number and bounds["max_integer_digits"] == 0 and len(distinct) <= MAX_CATEGORIES
               and 2 * len(distinct) <= len(values))
        # Text cells all ASCII digits ("06647") or missing-value spellings ("NA"):
        # pandas, and so the evaluation, reads them as numbers or as missing.
        texts = [cell for cell in values if not JSON_NUMBER.match(cell)]
        missing = sorted({cell for cell in texts if cell in MISSING_SPELLINGS})
        digit_strings = bool(texts) and all(DIGITS.fullmatch(cell) or cell in MISSING_SPELLINGS for cell in texts)
        schema.append(dict({"name": name, "type": "number" if number else "string",
                            "empty_cells": len(values) < len(cells)}, **bounds, digit_strings=digit_strings,
                           missing_values=missing if digit_strings else [], categories=distinct if few else []))
    template = prompt_template or (GROUPED_RECORDS_TEMPLATE if group_by else RECORDS_TEMPLATE)
    prompt = render_prompt_template(template, header, group_by, order_by)
    preparation = {"format": "records", "prompt_template": template, "group_by": group_by or "",
                   "order_by": order_by or "",
                   "records_schema": json.dumps({"columns": schema}, ensure_ascii=False, separators=(",", ":"))}
    if not group_by:
        return preparation, [(prompt, csv_row_to_json(header, row)) for row in rows]
    g = header.index(group_by)
    groups = {}
    for row in rows:
        groups.setdefault(row[g], []).append(row)  # dicts keep first-appearance order
    examples = []
    for members in groups.values():
        if order_by:
            o = header.index(order_by)
            numeric = schema[o]["type"] == "number"
            # Empty cells last; ties keep file order (sorted is stable).
            members = sorted(members, key=lambda r: (r[o] == "", float(r[o]) if numeric and r[o] else r[o]))
        examples.append((prompt, "\n".join(csv_row_to_json(header, row) for row in members)))
    return preparation, examples


def chat_template_of(tokenizer_config_path):
    """(chat_template, special tokens by name) of a tokenizer_config.json; its "default" template when it holds several."""
    try:
        with open(tokenizer_config_path, encoding="utf-8") as f:
            settings = json.load(f)
    except FileNotFoundError:
        raise UsageError("--format chat needs %s with a chat_template (nothing is downloaded)" % tokenizer_config_path)
    template = settings.get("chat_template")
    if isinstance(template, list):
        template = {t.get("name"): t.get("template") for t in template}.get("default")
    if not isinstance(template, str) or not template:
        raise UsageError("%s has no chat_template; --format chat renders conversations with it" % tokenizer_config_path)
    specials = {}
    for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
        value = settings.get(key)
        specials[key] = value.get("content") if isinstance(value, dict) else value
    return template, specials


def chat_renderer(template, special_tokens):
    """render(messages, add_generation_prompt) with Hugging Face's conventions for chat templates."""
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise TemplateError(message)

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    environment.globals["raise_exception"] = raise_exception
    compiled = environment.from_string(template)

    def render(messages, add_generation_prompt):
        return compiled.render(messages=messages, add_generation_prompt=add_generation_prompt, **special_tokens)

    return render


def chat_examples(path, render, encode):
    """(ids, mask) per conversation: the rendering's tokens, the assistant turns' tokens as targets.

    A turn's span is found by rendering the messages before it with the
    generation prompt and the messages up to it without; both must tokenise
    to a prefix of the whole conversation's tokens, else DataError.
    """
    from jinja2.exceptions import TemplateError

    count = 0
    for number, record in jsonl_records(path):
        messages = record.get("messages") if isinstance(record, dict) else None
        if not isinstance(messages, list) or not messages or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in messages):
            raise DataError('%s:%d: a chat record needs "messages": [{"role": ..., "content": ...}, ...]' % (path, number))
        try:
            ids = encode(render(messages, False))
            mask = [0] * len(ids)
            for i, message in enumerate(messages):
                if message["role"] != "assistant":
                    continue
                before = encode(render(messages[:i], True))
                through = encode(render(messages[:i + 1], False))
                if ids[:len(before)] != before or ids[:len(through)] != through:
                    raise DataError("%s:%d: the chat template's rendering of the turns before assistant message %d "
                                    "does not tokenise to a prefix of the conversation, so its answer cannot be "
                                    "located" % (path, number, i))
                mask[len(before):len(through)] = [1] * (len(through) - len(before))
        except TemplateError as e:
            raise DataError("%s:%d: the chat template refused the conversation: %s" % (path, number, e))
        count += 1
        yield ids, mask
    if count == 0:
        raise DataError("input %s holds no chat records" % path)
