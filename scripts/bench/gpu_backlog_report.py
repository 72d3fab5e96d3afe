#!/usr/bin/env python3
"""The figures of scripts/bench/gpu_backlog.sh's parts, read from what the
binaries wrote (metrics.jsonl, preflight.json, gtest logs, nss_generate's
JSON lines and log), each printed as Markdown the summary takes as it is.
Standard library only: it runs on the GPU image's python3 and on Debian's.

  gpu_backlog_report.py gtest NAME LOG MUST_RUN [--may-skip CASES]  one test binary's verdict line
  gpu_backlog_report.py train RUN_DIR [--smi F] [--peak-tflops T] [--label L] [--from-step N]
  gpu_backlog_report.py train-header
  gpu_backlog_report.py losses RUN_A RUN_B --after STEP   resumed losses side by side
  gpu_backlog_report.py greedy OUTPUT.jsonl EXPECTED.json STEP_NAME
  gpu_backlog_report.py generate-rate LOG                 nss_generate's new tokens/s
  gpu_backlog_report.py pairs BASE_RUN NEW_RUN [BASE_RUN NEW_RUN ...] [--label L]
                                                          two builds' tokens/s, pair by pair
"""
import argparse
import json
import re
import statistics
import sys


def gib(b):
    return b / 2**30


def gtest(args):
    """PASS only when the binary ran tests and none failed; a test that must
    run on the device (MUST_RUN=1) and skipped is a failure, not a pass,
    unless --may-skip names it (a case for builds without CUDA)."""
    try:
        # Under mpirun a rank's output goes through a terminal: gtest colours it.
        text = re.sub(r"\x1b\[[0-9;]*m", "", open(args.log, errors="replace").read())
    except OSError as e:
        print("- `%s`: FAIL — no log (%s)" % (args.name, e.strerror))
        return 1
    passed = re.search(r"^\[  PASSED  \] (\d+) test", text, re.M)
    failed = re.findall(r"^\[  FAILED  \] (\S+)", text, re.M)
    skipped = re.findall(r"^\[  SKIPPED \] (\S+)", text, re.M)
    failed = sorted(set(f for f in failed if "." in f))
    skipped = sorted(set(s for s in skipped if "." in s))
    count = int(passed.group(1)) if passed else 0
    if failed:
        verdict = "FAIL — failed: " + ", ".join(failed)
    elif count == 0 and not skipped:
        tail = text.strip().splitlines()[-1:] or ["(empty log)"]
        verdict = "FAIL — no test ran: " + tail[0][:200]
    elif args.must_run == "1" and set(skipped) - set(args.may_skip.split(",")):
        verdict = "FAIL — skipped on the device: " + ", ".join(sorted(set(skipped) - set(args.may_skip.split(","))))
    else:
        verdict = "PASS — %d passed" % count + (", skipped: " + ", ".join(skipped) if skipped else "")
    print("- `%s`: %s" % (args.name, verdict))
    return 0 if verdict.startswith("PASS") else 1


def rows_of(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def train_header(_args):
    print("| run | tokens/s (median) | step s | MFU | loss first → last | predicted | measured | real peak "
          "(allocator + context) | nvidia-smi peak |")
    print("|---|---|---|---|---|---|---|---|---|")
    return 0


def model_flops_per_token(pre, config_text):
    """6 N + 12 L H S (the attention scores, forward and backward): the MFU
    convention of docs/performance.md, read from the run's own shape."""
    n = pre["model"]["parameters"]

    def key(name):
        match = re.search(r"^\s+%s:\s*(\d+)" % name, config_text, re.M)
        return int(match.group(1)) if match else 0

    return 6 * n + 12 * key("num_hidden_layers") * key("hidden_size") * key("seq_len")


def train(args):
    run = args.run_dir
    try:
        pre = json.load(open(run + "/preflight.json"))
        steps = [r for r in rows_of(run + "/metrics.jsonl") if "tokens_per_s" in r]
        config_text = open(run + "/config.resolved.yaml").read()
    except (OSError, ValueError, KeyError) as e:
        print("| %s | no figures: %s | | | | | | | |" % (args.label or run, e))
        return 1
    if not steps:
        print("| %s | no step finished (preflight %s: %s) | | | | | | | |" % (
            args.label or run, pre.get("verdict"), pre.get("reason", "")[:120]))
        return 1
    if args.steps and max(r["step"] for r in steps) < args.steps:
        print("| %s | only %d of %d steps finished | | | | | | | |" % (
            args.label or run, max(r["step"] for r in steps), args.steps))
        return 1
    timed = [r for r in steps if r["step"] >= args.from_step] or steps
    tps = statistics.median(r["tokens_per_s"] for r in timed)
    step_s = statistics.median(r["step_time_s"] for r in timed)
    mem = pre["memory"]
    mfu = "—"
    if args.peak_tflops > 0:
        mfu = "%.1f%%" % (100 * tps * model_flops_per_token(pre, config_text) / (args.peak_tflops * 1e12))
    real = max(r["peak_mem_bytes"] for r in steps) + mem.get("fixed_overhead_bytes", 0)
    smi = "—"
    if args.smi:
        try:
            used = [int(l) for l in open(args.smi) if l.strip().isdigit()]
            smi = "%.2f GiB" % gib(max(used) * 2**20) if used else "—"
        except OSError:
            pass
    measured = mem.get("measured_peak_bytes")
    print("| %s | %.0f | %.3f | %s | %.3f → %.3f | %.2f GiB | %s | %.2f GiB | %s |" % (
        args.label or run, tps, step_s, mfu, steps[0]["loss"], steps[-1]["loss"],
        gib(mem["predicted_peak_bytes"]), "%.2f GiB" % gib(measured) if measured else "—", gib(real), smi))
    return 0


def losses(args):
    def by_step(run):
        return {r["step"]: r["loss"] for r in rows_of(run + "/metrics.jsonl") if "loss" in r and "step" in r}
    try:
        a, b = by_step(args.run_a), by_step(args.run_b)
    except (OSError, ValueError) as e:
        print("no losses to compare: %s" % e)
        return 1
    both = sorted(s for s in a if s > args.after and s in b)
    if not both:
        print("no step after %d in both runs" % args.after)
        return 1
    worst = max(abs(a[s] / b[s] - 1) for s in both)
    print("- steps %d–%d after step %d: max relative loss difference %.2e (%s)" % (
        both[0], both[-1], args.after, worst, args.label))
    return 0 if worst < args.tolerance else 1


def greedy(args):
    expected = json.loads(json.load(open(args.expected))["steps"][args.step]["greedy_output"])["tokens"]
    try:
        got = json.loads(open(args.output).readline())["tokens"]
    except (OSError, ValueError, KeyError) as e:
        print("- greedy `%s`: FAIL — no output (%s)" % (args.step, e))
        return 1
    same = 0
    while same < min(len(got), len(expected)) and got[same] == expected[same]:
        same += 1
    ok = got == expected
    print("- greedy `%s` (%s): %s — %d of %d tokens equal to the CPU's%s" % (
        args.step, args.label, "PASS" if ok else "FAIL", same, len(expected),
        "" if ok else "; got %s, CPU %s" % (got, expected)))
    return 0 if ok else 1


def generate_rate(args):
    rates = []
    for line in open(args.log, errors="replace"):
        match = re.search(r"(\d+) new tokens in ([0-9.]+) s", line)
        if match and float(match.group(2)) > 0:
            rates.append((int(match.group(1)), float(match.group(2))))
    if not rates:
        print("none")
        return 1
    tokens = sum(t for t, _ in rates)
    seconds = max(s for _, s in rates)
    print("%.0f" % (tokens / seconds))
    return 0


def pairs(args):
    """Two builds' interleaved runs: each pair's median tokens/s from step 3
    and their ratio (new / base), then the medians and the median ratio with
    the ratios' range. PASS (exit 0) when every run has figures and 1 lies
    within that range, i.e. the new build is as fast as the base one within
    the spread of the pairs."""
    if len(args.runs) % 2:
        print("- pairs: FAIL — %d run directories, not pairs of a base and a new run" % len(args.runs))
        return 1
    rates = []
    for run in args.runs:
        try:
            steps = [r for r in rows_of(run + "/metrics.jsonl") if "tokens_per_s" in r]
        except (OSError, ValueError) as e:
            print("- %s: no figures (%s)" % (run, e))
            return 1
        timed = [r["tokens_per_s"] for r in steps if r["step"] >= 3]
        if not timed:
            print("- %s: no step after the second finished" % run)
            return 1
        rates.append(statistics.median(timed))
    base, new = rates[0::2], rates[1::2]
    ratios = [n / b for b, n in zip(base, new)]
    print("| %s: pair | base tokens/s | new tokens/s | new / base |" % (args.label or "builds"))
    print("|---|---|---|---|")
    for i, (b, n, r) in enumerate(zip(base, new, ratios), start=1):
        print("| %d | %.0f | %.0f | %.4f |" % (i, b, n, r))
    low, high, middle = min(ratios), max(ratios), statistics.median(ratios)
    print("| median | %.0f | %.0f | %.4f (range %.4f-%.4f) |" % (
        statistics.median(base), statistics.median(new), middle, low, high))
    within = low <= 1.0 <= high
    print("")
    print("- new / base %.4f: %s the spread of the pairs (%.4f-%.4f)" % (
        middle, "1 lies within" if within else "outside", low, high))
    return 0 if within else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gtest")
    g.add_argument("name")
    g.add_argument("log")
    g.add_argument("must_run", choices=["0", "1"])
    g.add_argument("--may-skip", default="", help="comma-separated cases that skip on a GPU by design")
    g.set_defaults(run=gtest)
    sub.add_parser("train-header").set_defaults(run=train_header)
    t = sub.add_parser("train")
    t.add_argument("run_dir")
    t.add_argument("--smi")
    t.add_argument("--peak-tflops", type=float, default=0.0)
    t.add_argument("--label")
    t.add_argument("--from-step", type=int, default=3)
    t.add_argument("--steps", type=int, default=0, help="the steps the run had to finish (0: any)")
    t.set_defaults(run=train)
    l = sub.add_parser("losses")
    l.add_argument("run_a")
    l.add_argument("run_b")
    l.add_argument("--after", type=int, required=True)
    l.add_argument("--tolerance", type=float, default=1e-3)
    l.add_argument("--label", default="")
    l.set_defaults(run=losses)
    e = sub.add_parser("greedy")
    e.add_argument("output")
    e.add_argument("expected")
    e.add_argument("step")
    e.add_argument("--label", default="")
    e.set_defaults(run=greedy)
    r = sub.add_parser("generate-rate")
    r.add_argument("log")
    r.set_defaults(run=generate_rate)
    a = sub.add_parser("pairs")
    a.add_argument("runs", nargs="+", help="base and new run directories, pair by pair")
    a.add_argument("--label", default="")
    a.set_defaults(run=pairs)
    args = p.parse_args()
    sys.exit(args.run(args))


if __name__ == "__main__":
    main()
