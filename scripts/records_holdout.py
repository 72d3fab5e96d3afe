"""The records holdout of nss_prepare_data (lib/data/holdout.cpp,
lib/data/records_holdout.cpp; docs/data.md, "Holdout"), the same rows for the
same table and seed, for scripts/prepare_data_hf.py."""
import math
import os

from data_inputs import UsageError

DEFAULT_MAX_HOLDOUT = 2000
MIN_HOLDOUT_ROWS = 10
MIN_ROWS_FOR_HOLDOUT = 200
MASK64 = (1 << 64) - 1
HOLDOUT_STREAM = 0x686f6c646f7574  # "holdout": the permutation's epoch slot


def mix64(value):
    """SplitMix64's finaliser (lib/data/sample_permutation.cpp)."""
    value = (value + 0x9e3779b97f4a7c15) & MASK64
    value = ((value ^ (value >> 30)) * 0xbf58476d1ce4e5b9) & MASK64
    value = ((value ^ (value >> 27)) * 0x94d049bb133111eb) & MASK64
    return value ^ (value >> 31)


class SamplePermutation:
    """The dataloader's Feistel permutation of [0, size) for (seed, epoch)."""

    ROUNDS = 6

    def __init__(self, size, seed, epoch):
        self.size = size
        bits = 0
        while bits < 64 and (1 << bits) < size:
            bits += 1
        self.half_bits = 1 if bits < 2 else (bits + 1) // 2
        self.half_mask = (1 << self.half_bits) - 1
        stream = mix64(mix64(seed) ^ ((epoch * 0xd1b54a32d192ed03) & MASK64))
        self.keys = [mix64((stream + r) & MASK64) for r in range(self.ROUNDS)]

    def encrypt(self, value):
        left, right = value >> self.half_bits, value & self.half_mask
        for key in self.keys:
            left, right = right, left ^ (mix64(right ^ key) & self.half_mask)
        return (left << self.half_bits) | right

    def __call__(self, position):
        if self.size <= 1:
            return position
        value = self.encrypt(position)
        while value >= self.size:
            value = self.encrypt(value)
        return value


def holdout_target(size, max_rows, rows):
    """Rows to hold out: a fraction (below 1, truncated) or a whole count, capped at max_rows."""
    if max_rows < 0:
        raise UsageError("--max-holdout %d; give the most rows to hold out, 0 or more" % max_rows)
    if not size:
        return 0
    hint = "give a fraction below 1 (0.05 holds out 5% of the rows) or a whole number of rows (500)"
    try:
        value = float(size)
    except ValueError:
        raise UsageError("--holdout %s: not a number; %s" % (size, hint))
    if not math.isfinite(value):
        raise UsageError("--holdout %s: not a number; %s" % (size, hint))
    if value < 0:
        raise UsageError("--holdout %s: negative; %s" % (size, hint))
    if value < 1:
        wanted = math.floor(value * rows)
    elif value != math.floor(value):
        raise UsageError("--holdout %s: a count of rows is a whole number; %s" % (size, hint))
    else:
        wanted = value
    return int(min(wanted, max_rows))


def split_holdout(keys, size, max_rows, seed):
    """(held_out per row or None, target, groups taken, warning): rows with equal keys stay together."""
    rows = len(keys)
    target = holdout_target(size, max_rows, rows)
    if not size or float(size) == 0:
        return None, target, 0, ""
    asked = "--holdout %s of %d rows" % (size, rows)
    if rows < MIN_ROWS_FOR_HOLDOUT:
        return None, target, 0, ("%s: no holdout, the table has fewer than %d rows (too few to tell a held-out "
                                 "row from a training row); training on all of them" % (asked, MIN_ROWS_FOR_HOLDOUT))
    if target < MIN_HOLDOUT_ROWS:
        return None, target, 0, ("%s is %d rows, fewer than %d: no holdout; raise --holdout (or --max-holdout) to "
                                 "evaluate against one" % (asked, target, MIN_HOLDOUT_ROWS))
    groups = {}
    for r, key in enumerate(keys):
        groups.setdefault(key, []).append(r)  # dicts keep first-appearance order
    members = list(groups.values())
    order = SamplePermutation(len(members), seed, HOLDOUT_STREAM)
    held, taken, count = [False] * rows, 0, 0
    for position in range(len(members)):
        if count == target:
            break
        group = members[order(position)]
        if abs(count + len(group) - target) >= abs(count - target):
            continue
        for r in group:
            held[r] = True
        count += len(group)
        taken += 1
    if count in (0, rows):
        return None, target, 0, ("%s: no holdout, the %d groups of rows cannot be split near %d held-out rows with "
                                 "training rows left" % (asked, len(members), target))
    return held, target, taken, ""


def csv_cell(text):
    if not any(c in text for c in ',"\r\n'):
        return text
    return '"' + text.replace('"', '""') + '"'


def csv_line(fields):
    return ",".join(csv_cell(f) for f in fields) + "\n"


def stem(output):
    root, extension = os.path.splitext(output)
    return root if extension else output


def holdout_paths(output):
    """(holdout CSV, --holdout-eval token file) beside the token file `output`."""
    return stem(output) + ".holdout.csv", stem(output) + ".holdout.h5"


def group_keys(header, rows, group_by, path):
    if not group_by:
        return [csv_line(row) for row in rows]
    if group_by not in header:
        raise UsageError("--group-by %s: %s has no such column; choose one of: %s" % (group_by, path,
                                                                                     ", ".join(header)))
    g = header.index(group_by)
    return [row[g] for row in rows]
