#!/usr/bin/python3
"""Checkpoint benchmark: one run measures, on the same disk,
  1. write bandwidth of a synchronous save vs `dd conv=fsync` of the same
     bytes, with as many dd streams as ranks (one per rank file) and with one,
  2. load + reshard bandwidth (saved at --ranks, loaded at --load-ranks, every
     checksum verified) vs reading the same files with dd, one stream per file,
  3. the blocking_seconds of an asynchronous save vs a synchronous save, with
     the snapshot copied inside save() and with it overlapped with the next
     forward/backward (--overlap-ms of it, then the snapshot fence),
  4. consolidation bandwidth and peak RSS under --max-memory (hdf5 and hf).
Page caches of the files are dropped (posix_fadvise DONTNEED) before every read
measurement. Each figure is the median of --repeat runs.

  scripts/bench/checkpoint_bench.py [--build build] [--dir DIR] [--repeat 3]
      [--ranks 2] [--load-ranks 3] [--shape V,H,I,L,KV] [--max-memory 64MiB]
      [--overlap-ms 250]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def run(args, **kwargs):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=ENV, **kwargs)
    if proc.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(map(str, args)), proc.stdout, proc.stderr))
    return proc


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def files_under(path):
    return [os.path.join(d, f) for d, _, names in os.walk(path) for f in names]


def drop_cache_files(files):
    """Evicts the (clean, fsynced) pages of `files`; no root needed."""
    for name in files:
        fd = os.open(name, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def drop_cache(path):
    drop_cache_files(files_under(path) if os.path.isdir(path) else [path])


def concurrently(commands):
    """Wall seconds for running `commands` at the same time (each must succeed)."""
    start = time.monotonic()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
             for c in commands]
    for c, p in zip(commands, procs):
        if p.wait() != 0:
            sys.exit("failed: %s\n%s" % (" ".join(c), p.stderr.read().decode()))
    return time.monotonic() - start


def dd_write_seconds(directory, sizes):
    """Writes one file per size with dd conv=fsync, all at once; returns the wall time."""
    paths = [os.path.join(directory, "dd_%d.bin" % i) for i in range(len(sizes))]
    seconds = concurrently([["dd", "if=/dev/zero", "of=" + p, "bs=1M",
                             "count=%d" % -(-size // (1 << 20)), "conv=fsync"]
                            for p, size in zip(paths, sizes)])
    for p in paths:
        os.remove(p)
    return seconds


def read_seconds(files):
    """Reads every file with dd, one stream per file, all at once."""
    drop_cache_files(files)
    return concurrently([["dd", "if=" + f, "of=/dev/null", "bs=4M"] for f in files])


def one_run(args, bench_dir, binaries):
    writer, consolidate = binaries
    shape = ["--shape", args.shape]
    mpiexec = [args.mpiexec, "-n"]
    ckpt = os.path.join(bench_dir, "checkpoints")
    figures = {}

    # 1. Synchronous save vs dd of the same size.
    event = json_lines(run(mpiexec + [args.ranks, writer, "save", "--dir", ckpt, "--first", 1] +
                           shape).stdout)[0]
    step_dir = os.path.join(ckpt, "step_00000001")
    rank_files = sorted(f for f in files_under(step_dir) if f.endswith(".h5"))
    nbytes = sum(os.path.getsize(f) for f in files_under(step_dir))
    figures["checkpoint_bytes"] = nbytes
    figures["save_seconds"] = event["seconds"]
    figures["save_MBps"] = nbytes / event["seconds"] / 1e6
    dd_seconds = dd_write_seconds(bench_dir, [os.path.getsize(f) for f in rank_files])
    figures["dd_fsync_MBps"] = nbytes / dd_seconds / 1e6
    figures["save_vs_dd"] = dd_seconds / event["seconds"]
    dd_one = dd_write_seconds(bench_dir, [nbytes])
    figures["dd_fsync_1stream_MBps"] = nbytes / dd_one / 1e6

    # 2. Load at another world size vs reading the same files.
    drop_cache(step_dir)
    line = json_lines(run(mpiexec + [args.load_ranks, writer, "load", "--dir", ckpt, "--resume",
                                     step_dir] + shape).stdout)[0]
    assert line["mismatches"] == 0, line
    raw = read_seconds(rank_files)
    figures["load_seconds"] = line["seconds"]
    figures["load_MBps"] = nbytes / line["seconds"] / 1e6
    figures["load_bytes_read_ratio"] = line["bytes_read"] / nbytes
    figures["read_MBps"] = nbytes / raw / 1e6
    figures["load_vs_read"] = raw / line["seconds"]

    # 3. Asynchronous saves: what the caller waits for.
    for mode, step, extra in (("async", 2, []),
                              ("overlapped", 3, ["--overlap-snapshot", "--interval-ms",
                                                 args.overlap_ms])):
        e = json_lines(run(mpiexec + [args.ranks, writer, "save", "--dir", ckpt, "--first", step,
                                      "--async"] + extra + shape).stdout)[0]
        figures["%s_blocking_seconds" % mode] = e["blocking_seconds"]
        figures["%s_save_seconds" % mode] = e["seconds"]
        figures["%s_blocking_vs_sync" % mode] = e["blocking_seconds"] / event["seconds"]

    # 4. Consolidation under a memory budget (checkpoint pages evicted first).
    for fmt, name in (("hdf5", "consolidated.h5"), ("hf", "consolidated_hf")):
        drop_cache(step_dir)
        out = os.path.join(bench_dir, name)
        report = os.path.join(bench_dir, "time.txt")
        start = time.monotonic()
        run(["/usr/bin/time", "-f", "%M", "-o", report, consolidate, step_dir, "--output", out,
             "--format", fmt, "--max-memory", args.max_memory])
        seconds = time.monotonic() - start
        written = sum(os.path.getsize(f) for f in files_under(out)) if os.path.isdir(out) \
            else os.path.getsize(out)
        with open(report) as f:
            figures["consolidate_%s_peak_rss_MiB" % fmt] = int(f.read().split()[-1]) / 1024
        figures["consolidate_%s_MBps" % fmt] = written / seconds / 1e6
        figures["consolidate_%s_written_bytes" % fmt] = written
        shutil.rmtree(out) if os.path.isdir(out) else os.remove(out)
    shutil.rmtree(ckpt)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--dir", default=None, help="scratch directory on the disk to measure")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--load-ranks", type=int, default=3)
    parser.add_argument("--shape", default="16384,1024,2752,2,256",
                        help="vocab,hidden,intermediate,layers,kv_dim of the synthetic model")
    parser.add_argument("--max-memory", default="64MiB")
    parser.add_argument("--overlap-ms", type=int, default=250,
                        help="forward/backward time the overlapped snapshot may hide behind")
    parser.add_argument("--mpiexec", default=shutil.which("mpiexec") or "mpiexec")
    args = parser.parse_args()
    binaries = (os.path.join(args.build, "bin", "ckpt_writer"),
                os.path.join(args.build, "bin", "nss_consolidate"))
    for b in binaries:
        if not os.path.exists(b):
            sys.exit("missing %s: build first (cmake --build %s)" % (b, args.build))
    parent = args.dir or os.path.join(args.build, "bench")
    os.makedirs(parent, exist_ok=True)
    runs = []
    for i in range(args.repeat):
        bench_dir = tempfile.mkdtemp(prefix="checkpoint_bench_", dir=parent)
        try:
            runs.append(one_run(args, bench_dir, binaries))
        finally:
            shutil.rmtree(bench_dir, ignore_errors=True)
        print("run %d: %s" % (i + 1, json.dumps({k: round(v, 3) for k, v in runs[-1].items()})),
              flush=True)
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print("\nmedian of %d runs (%d ranks save, %d ranks load, shape %s, %s checkpoint):"
          % (args.repeat, args.ranks, args.load_ranks, args.shape,
             "%.0f MB" % (median["checkpoint_bytes"] / 1e6)))
    rows = [("checkpoint write", "%.0f MB/s" % median["save_MBps"],
             "dd conv=fsync %.0f MB/s" % median["dd_fsync_MBps"], median["save_vs_dd"], ">= 0.7"),
            ("", "", "(1 dd stream %.0f MB/s)" % median["dd_fsync_1stream_MBps"], None, ""),
            ("load + reshard", "%.0f MB/s" % median["load_MBps"],
             "dd read %.0f MB/s" % median["read_MBps"], median["load_vs_read"], ">= 0.7"),
            ("async blocking", "%.3f s" % median["async_blocking_seconds"],
             "sync save %.3f s" % median["save_seconds"], median["async_blocking_vs_sync"],
             "<= 0.1"),
            ("  overlapped", "%.3f s" % median["overlapped_blocking_seconds"],
             "(%d ms forward/backward)" % args.overlap_ms, median["overlapped_blocking_vs_sync"],
             "<= 0.1"),
            ("consolidate hdf5", "%.0f MB/s" % median["consolidate_hdf5_MBps"],
             "peak RSS %.1f MiB" % median["consolidate_hdf5_peak_rss_MiB"], None,
             "--max-memory " + args.max_memory),
            ("consolidate hf", "%.0f MB/s" % median["consolidate_hf_MBps"],
             "peak RSS %.1f MiB" % median["consolidate_hf_peak_rss_MiB"], None,
             "--max-memory " + args.max_memory)]
    for name, value, reference, ratio, goal in rows:
        print("  %-18s %-14s %-28s %-8s %s" % (name, value, reference,
                                                 "" if ratio is None else "%.2fx" % ratio,
                                                 "goal " + goal if goal else ""))
    print(json.dumps({"median": median, "runs": runs}))


if __name__ == "__main__":
    main()
