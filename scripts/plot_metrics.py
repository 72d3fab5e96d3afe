#!/usr/bin/python3
"""Turns a run's metrics.jsonl into a PNG: training loss and validation loss
per step (top), throughput in tokens/s (bottom).

    scripts/plot_metrics.py runs/default/metrics.jsonl [-o runs/default/metrics.png]
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # batch nodes have no display
import matplotlib.pyplot as plt  # noqa: E402


def read_metrics(path):
    steps, evals = {}, {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit("%s:%d: not JSON (%s)" % (path, number, e))
            event = record.get("event")
            if event is None and "loss" in record:
                steps[record["step"]] = record  # a resumed run re-logs a step: the newest wins
            elif event == "eval":
                evals[record["step"]] = record["val_loss"]
    return [steps[s] for s in sorted(steps)], sorted(evals.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("metrics", help="metrics.jsonl of a run")
    parser.add_argument("-o", "--output", help="PNG to write (default: next to the metrics file)")
    args = parser.parse_args()
    steps, evals = read_metrics(args.metrics)
    if not steps:
        sys.exit("%s holds no training steps" % args.metrics)
    output = args.output or os.path.join(os.path.dirname(os.path.abspath(args.metrics)), "metrics.png")

    figure, (loss_axis, speed_axis) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    loss_axis.plot([r["step"] for r in steps], [r["loss"] for r in steps], label="training loss")
    if evals:
        loss_axis.plot([s for s, _ in evals], [v for _, v in evals], "o-", label="validation loss")
    loss_axis.set_ylabel("loss (nats/token)")
    loss_axis.grid(alpha=0.3)
    loss_axis.legend()
    speed_axis.plot([r["step"] for r in steps], [r["tokens_per_s"] for r in steps], color="tab:green")
    speed_axis.set_ylabel("tokens/s (all ranks)")
    speed_axis.set_xlabel("step")
    speed_axis.grid(alpha=0.3)
    figure.suptitle(os.path.basename(os.path.dirname(os.path.abspath(args.metrics))) or "run")
    figure.tight_layout()
    figure.savefig(output, dpi=100)
    print(output)


if __name__ == "__main__":
    main()
