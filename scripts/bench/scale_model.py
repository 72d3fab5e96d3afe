#!/usr/bin/python3
"""Layout advice for FSDP and HSDP (docs/performance.md, "Scaling model (HSDP
layout advice)"): predicts one optimizer step per rank, its tokens/s/GPU and
the weak-scaling efficiency against one node, at 8..1024 GPUs, for full
sharding (parallel.shard_group_size 0, G = N) and hybrid sharding (HSDP: ZeRO-3
within groups of G consecutive ranks, replicated across the N/G groups).

The step, per rank, for every micro-step and every unit (embedding, each
decoder block, norm + head; docs/architecture.md "Communication per
micro-step"):

  forward   all-gather the unit (compute dtype) within the shard group, compute
  backward  all-gather again (activation checkpointing), recompute + backward,
            reduce-scatter the gradient (fp32 by default) within the group,
            then under HSDP all-reduce this rank's gradient shard across the
            N/G replica groups

then the optimizer on this rank's shard (P/G parameters) and four small
all-reduces (target tokens, loss, gradient norm, stop agreement) over all
ranks. With tensor parallelism (--tensor T: ranks laid out as replica x shard
x tensor, G counting the ranks of one tensor rank) each rank holds its part
of every unit (a 1/T share of the split tensors) and computes a 1/T share of
each token, and every layer's all-gathers and reduce-scatters of the hidden
states (all-reduces without sequence parallelism) run on the compute stream
within the node (docs/architecture.md, "Communication per micro-step"). Collectives cost latency + bytes / bus bandwidth with nccl-tests'
factors (doc/PERFORMANCE.md: all-gather and reduce-scatter (n-1)/n of the
whole buffer, all-reduce 2(n-1)/n). Compute is calibrated: a measured
tokens/s/GPU or step time at a reference layout (default: torchtitan's
Llama-3.1-8B FSDP figure on 8 H100s), or the compute time itself (e.g. the
preflight's synthetic step, whose collectives are local copies).

Python 3 standard library only (numpy is not needed). Usage:

  scale_model.py                              # the table for the default (torchtitan 8B) scenario
  scale_model.py --json                       # the same as JSON
  scale_model.py --advise 512 0               # is full sharding (G=0, i.e. 512) far from the best at N=512?
  scale_model.py --torchtitan                 # the model against torchtitan's 128-GPU figure
  scale_model.py --preset llama-3.2-1b --seq-len 2048 --micro-batch 4 --compute-s 0.9
  scale_model.py --ref-metrics run/metrics.jsonl --ref-gpus 8 --seq-len 2048 --micro-batch 4
"""
import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass, field, replace

# ---------------------------------------------------------------------------
# Model shapes (lib/config/model_presets.cpp; docs/model.md "Presets").


@dataclass(frozen=True)
class Shape:
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool

    def block_params(self):
        h, d = self.hidden, self.head_dim
        return (2 * h * self.heads * d + 2 * h * self.kv_heads * d + 3 * h * self.intermediate
                + 2 * h)

    def parameters(self):
        """Exact count, model::parameter_count_formula (a tied embedding once)."""
        return (self.vocab * self.hidden * (1 if self.tied else 2) + self.hidden
                + self.layers * self.block_params())


PRESETS = {
    "llama-3.2-1b": Shape(2048, 8192, 16, 32, 8, 64, 128256, True),
    "llama-3.2-3b": Shape(3072, 8192, 28, 24, 8, 128, 128256, True),
    "llama-3.1-8b": Shape(4096, 14336, 32, 32, 8, 128, 128256, False),
    "smollm2-1.7b": Shape(2048, 8192, 24, 32, 32, 64, 49152, True),
    "tinyllama-1.1b": Shape(2048, 5632, 22, 32, 4, 64, 32000, False),
}


def preset(name):
    key = name.lower()
    if key not in PRESETS:  # accept llama3.1-8b for llama-3.1-8b
        key = key.replace("llama3", "llama-3")
    if key not in PRESETS:
        raise ValueError("unknown preset %r (known: %s)" % (name, ", ".join(sorted(PRESETS))))
    return PRESETS[key]


@dataclass(frozen=True)
class Unit:
    name: str
    gathered: int      # elements all-gathered (trainable + frozen; a tied embedding again in the head)
    reduced: int       # elements of the reduce-scattered gradient
    flops_weight: float  # forward FLOPs per token, to split the compute between units
    owned: int = None  # elements whose optimizer state it holds (None: reduced; a tied head: its norm)


def tensor_parallel_error(shape, t, seq_len=None, sequence_parallel=True):
    """Why the shape cannot be split over t tensor ranks (arch::tensor_parallel_plan), or None."""
    if t < 1:
        return "tensor parallel size %d is not positive" % t
    if shape.heads % t or shape.intermediate % t:
        return "%d does not divide the heads (%d) and the intermediate size (%d)" % (
            t, shape.heads, shape.intermediate)
    if shape.kv_heads % t and t % shape.kv_heads:
        return "%d neither divides nor is a multiple of the key/value heads (%d)" % (
            t, shape.kv_heads)
    if sequence_parallel and seq_len is not None and seq_len % t:
        return "%d does not divide the sequence length (%d)" % (t, seq_len)
    return None


def units(shape, seq_len, t=1):
    """nss_hpc's FSDP units with their sizes and forward FLOPs per token
    (2 per weight, attention 4·s·heads·head_dim as in docs/performance.md's
    MFU formula; the embedding lookup costs nothing): at t tensor ranks one
    rank's parts (heads, key/value heads — one replicated when t exceeds
    them — MLP features and rows of the vocabulary padded to a multiple of
    t; norms whole)."""
    h, d = shape.hidden, shape.head_dim
    rows = -(-shape.vocab // t)  # the padded vocabulary's rows per rank
    heads, kv = shape.heads // t, max(1, shape.kv_heads // t)
    out = [Unit("embedding", rows * h, rows * h, 0.0)]
    attention = 4.0 * seq_len * heads * d
    matrices = 2 * h * heads * d + 2 * h * kv * d + 3 * h * (shape.intermediate // t)
    block = matrices + 2 * h
    out += [Unit("block %d" % i, block, block, 2.0 * matrices + attention)
            for i in range(shape.layers)]
    head = h + rows * h  # the norm, and either the untied head or the tied embedding again
    out.append(Unit("head", head, head, 2.0 * rows * h, h if shape.tied else None))
    return out


# ---------------------------------------------------------------------------
# Network and collectives.

GB = 1e9


@dataclass(frozen=True)
class Network:
    gpus_per_node: int = 8
    intra_busbw: float = 450 * GB   # NVLink 4 per GPU and direction (nccl-tests busbw measures it)
    nic_bw: float = 400e9 / 8       # 400 Gb/s per GPU between nodes
    # Latencies (s), NCCL's own tuning model for the Simple protocol
    # (src/graph/tuning.cc: ring step 3.4 us over NVLink, 14 us over the
    # network, 8.4 us per collective).
    alpha_intra: float = 3.4e-6     # a ring step (or tree level) within a node
    alpha_inter: float = 14e-6      # a ring step (or tree level) between nodes
    alpha_base: float = 8.4e-6      # once per collective
    # "rails": a group with m members on each of its nodes drives m NICs in
    # parallel (NCCL opens ring channels on every NIC), so a ring that leaves
    # the node runs at min(intra, m × nic) — the ≈ 400 GB/s bus bandwidth
    # nccl-tests shows across H100 nodes with 8 × 400 Gb/s. "single-nic":
    # every ring that leaves a node is held to one NIC (the slowest link of
    # one ring), the pessimistic bound.
    inter_model: str = "rails"


def span(n, stride, net):
    """(nodes k, members per node m) of a group of n ranks r0, r0+stride, ...
    with ranks packed gpus_per_node to a node."""
    gpn = net.gpus_per_node
    if n <= 1:
        return 1, 1
    if stride >= gpn:                       # one member per node
        return n, 1
    per_node = min(n, gpn // stride)        # consecutive (stride 1) or strided within a node
    return max(1, math.ceil(n / per_node)), per_node


def bus_bandwidth(net, k, m):
    """Per-GPU bus bandwidth of a collective over k nodes with m members each."""
    if k <= 1:
        return net.intra_busbw
    nics = m if net.inter_model == "rails" else 1
    return min(net.intra_busbw, nics * net.nic_bw)


def ring_latency(net, n, k):
    """n-1 ring steps, k-1 of them between nodes (NCCL's tuning model)."""
    if n <= 1:
        return 0.0
    inter = k - 1
    return (n - 1 - inter) * net.alpha_intra + inter * net.alpha_inter


def tree_latency(net, k, m):
    """Up and down a binary tree: 2·(log2 m intra + log2 k inter) levels."""
    return 2.0 * (math.ceil(math.log2(m)) * net.alpha_intra
                  + math.ceil(math.log2(k)) * net.alpha_inter) if m * k > 1 else 0.0


def all_gather_time(net, nbytes, n, k, m):
    """nbytes: the whole gathered buffer (nccl-tests' S)."""
    if n <= 1:
        return 0.0
    return (net.alpha_base + ring_latency(net, n, k)
            + nbytes * (n - 1) / n / bus_bandwidth(net, k, m))


def reduce_scatter_time(net, nbytes, n, k, m):
    """nbytes: the whole input buffer (nccl-tests' S)."""
    return all_gather_time(net, nbytes, n, k, m)


def all_reduce_time(net, nbytes, n, k, m):
    """Ring or tree, whichever is faster; the same bus bandwidth for both."""
    if n <= 1:
        return 0.0
    transfer = nbytes * 2.0 * (n - 1) / n / bus_bandwidth(net, k, m)
    return net.alpha_base + transfer + min(2.0 * ring_latency(net, n, k), tree_latency(net, k, m))


# ---------------------------------------------------------------------------
# The step.

CHECKPOINTING = {
    # recompute: the share of the forward that the backward recomputes (it only
    # moves compute between the two halves); gathers per unit and micro-step.
    "unit": (1.0, 2),       # nss_hpc training.activation_checkpointing: true
    "selective": (0.5, 2),  # torchtitan selective AC: FSDP2 still re-gathers in backward (a guess at 0.5)
    "none": (0.0, 1),       # nss_hpc without checkpointing: gathered buffers kept for backward
}


@dataclass(frozen=True)
class Scenario:
    shape: Shape = PRESETS["llama-3.1-8b"]
    seq_len: int = 8192
    micro_batch: int = 2
    micro_steps: int = 1            # gradient accumulation: micro-steps per optimizer step
    gather_bytes: int = 2           # bf16 compute dtype
    reduce_bytes: int = 4           # fp32 gradient reduction (nss_hpc)
    checkpointing: str = "unit"
    hsdp_allreduce: str = "micro"   # "micro": every micro-step per unit; "step": once, in the last one
    replica_stream: str = "separate"  # the replica all-reduces: "separate", "shared" or "blocking"
    net: Network = field(default_factory=Network)
    compute_s: float = None         # forward + backward compute per optimizer step (no collectives)
    optimizer_s_per_param: float = 2e-11  # AdamW on the shard (docs/performance.md "GPU": ≈ 20 ms per 1.24 B)
    overlap: float = 1.0            # 1: the prefetch schedule; 0: no overlap at all
    tensor: int = 1                 # parallel.tensor_parallel_size T (micro_steps are at this T)
    sequence_parallel: bool = True  # parallel.sequence_parallel
    loss_chunk: int = 512           # training.loss_chunk_tokens (the head's loss all-reduces per chunk)

    def tokens_per_rank(self):
        """Tokens of one data-parallel rank (its T tensor ranks together) per step."""
        return self.seq_len * self.micro_batch * self.micro_steps


def at_tensor(sc, t):
    """The same job at T = t: the same global batch and micro-batch over
    world / t data-parallel ranks, so t / T times the micro-steps; a rank's
    compute per step is unchanged (each token costs it 1/t of its FLOPs).
    ValueError when the micro-steps are not a whole number."""
    steps = sc.micro_steps * t
    if steps % sc.tensor:
        raise ValueError("at tensor parallel size %d the global batch is %s micro-steps per rank"
                         % (t, "%g" % (steps / sc.tensor)))
    return replace(sc, tensor=t, micro_steps=steps // sc.tensor)


def tensor_times(sc, net, t, tk, tm):
    """Seconds of tensor-parallel collectives per micro-step, on the compute
    stream, for each unit's forward and backward (embedding, blocks, head):
    docs/architecture.md's bytes_tensor. With sequence parallelism a region is
    an all-gather and a reduce-scatter of the micro-batch's hidden states,
    without it an all-reduce; every norm's gradient is summed over the group
    under sequence parallelism; the head all-reduces three fp32 values per
    token of each loss chunk."""
    if t <= 1:
        return [(0.0, 0.0)] * (sc.shape.layers + 2)
    tokens = sc.micro_batch * sc.seq_len
    hidden = tokens * sc.shape.hidden * sc.gather_bytes
    ag = all_gather_time(net, hidden, t, tk, tm)
    rs = reduce_scatter_time(net, hidden, t, tk, tm)
    ar = all_reduce_time(net, hidden, t, tk, tm)
    sp = sc.sequence_parallel
    norm = all_reduce_time(net, sc.shape.hidden * sc.gather_bytes, t, tk, tm) if sp else 0.0
    region = ag + rs if sp else ar
    chunk = min(sc.loss_chunk, tokens) if sc.loss_chunk > 0 else tokens
    loss = 3 * -(-tokens // chunk) * all_reduce_time(net, 4 * chunk, t, tk, tm)
    embedding = (rs if sp else ar, ag if sp else 0.0)
    block = (2 * region, 2 * region + 2 * norm)
    head = ((ag if sp else 0.0) + loss, (rs if sp else ar) + norm)
    return [embedding] + [block] * sc.shape.layers + [head]


def layouts(n, net, groups=(8, 16, 32, 64)):
    """Full sharding (G = N) first, then the HSDP group sizes that divide N and are < N."""
    return [n] + [g for g in groups if g < n and n % g == 0]


def step_time(sc, n, g, compute_s=None):
    """Predicted optimizer step of one rank at world n, shard group g (ranks
    of one tensor rank) and sc.tensor tensor ranks. Returns a dict: step_s
    (with sc.overlap), overlapped_s (overlap 1), serial_s (overlap 0), comm_s
    (all collectives' time), exposed_s, and the parts."""
    t = sc.tensor
    if g < 1 or t < 1 or n % (g * t):
        raise ValueError("shard group size %d x tensor parallel size %d must divide the world "
                         "size %d" % (g, t, n))
    compute = sc.compute_s if compute_s is None else compute_s
    if compute is None:
        raise ValueError("no compute time: calibrate first (calibrate())")
    net = sc.net
    recompute, gathers = CHECKPOINTING[sc.checkpointing]
    r = n // (g * t)                            # replica groups
    gk, gm = span(g, t, net)                    # the shard group: every t-th rank
    rk, rm = span(r, g * t, net)                # a replica group: every (g t)-th rank
    tk, tm = span(t, 1, net)                    # the tensor group: consecutive ranks
    us = units(sc.shape, sc.seq_len, t)
    tensor = tensor_times(sc, net, t, tk, tm)
    total_w = sum(u.flops_weight for u in us) or 1.0
    per_micro = compute / sc.micro_steps
    fwd, bwd, gat, rs, ar = [], [], [], [], []
    for u, (tensor_fwd, tensor_bwd) in zip(us, tensor):
        share = per_micro * u.flops_weight / total_w
        # The backward reruns the forward's collectives when it recomputes.
        fwd.append((share / (3.0 + recompute), tensor_fwd))
        bwd.append((share * (2.0 + recompute) / (3.0 + recompute),
                    tensor_bwd + (tensor_fwd if recompute > 0 else 0.0)))
        padded_g = math.ceil(u.gathered / g) * g
        padded_r = math.ceil(u.reduced / g) * g
        gat.append(all_gather_time(net, padded_g * sc.gather_bytes, g, gk, gm))
        rs.append(reduce_scatter_time(net, padded_r * sc.reduce_bytes, g, gk, gm))
        ar.append(all_reduce_time(net, padded_r // g * sc.reduce_bytes, r, rk, rm))
    nu = len(us)
    # The compute stream's ops over the step, each needing its unit's gather
    # (forward, then backward with a second gather when checkpointing), and
    # after a backward its reduce-scatter and, under HSDP, all-reduce; the
    # tensor group's collectives run on the compute stream itself.
    ops, tensor_total = [], 0.0
    for micro in range(sc.micro_steps):
        last = micro == sc.micro_steps - 1
        with_ar = r > 1 and (sc.hsdp_allreduce == "micro" or last)
        ops += [(sum(fwd[i]), gat[i], 0.0, 0.0) for i in range(nu)]
        ops += [(sum(bwd[i]), gat[i] if gathers == 2 else 0.0, rs[i], ar[i] if with_ar else 0.0)
                for i in reversed(range(nu))]
        tensor_total += sum(f[1] + b[1] for f, b in zip(fwd, bwd))
    # Streams: compute, one FIFO stream for the shard group's collectives, and
    # the replica all-reduces (sc.replica_stream: "separate" — their own
    # stream, each after its reduce-scatter; "shared" — queued on the shard
    # stream; "blocking" — the host waits for it, as nss_hpc's all_reduce
    # does today). Unit i+1's gather is issued when unit i's compute starts
    # (nss_hpc prefetches one neighbour); a unit's reduce-scatter when its
    # backward ends.
    comm_free = ops[0][1]
    gather_done = [0.0] * len(ops)
    gather_done[0] = comm_free
    compute_free = rep_free = 0.0
    for i, (dur, _, rs_t, ar_t) in enumerate(ops):
        start = max(compute_free, gather_done[i])
        if i + 1 < len(ops) and ops[i + 1][1]:
            comm_free = max(comm_free, start) + ops[i + 1][1]
            gather_done[i + 1] = comm_free
        compute_free = start + dur
        if rs_t:
            comm_free = max(comm_free, compute_free) + rs_t
        if ar_t:
            if sc.replica_stream == "shared":
                comm_free += ar_t
            elif sc.replica_stream == "separate":
                rep_free = max(rep_free, comm_free) + ar_t
            else:  # blocking: the next compute waits for the all-reduce
                rep_free = max(rep_free, comm_free) + ar_t
                compute_free = rep_free
    overlapped_body = max(compute_free, comm_free, rep_free)
    comm_total = sum(o[1] + o[2] + o[3] for o in ops) + tensor_total
    wk, wm = span(n, 1, net)
    small = 4 * all_reduce_time(net, 8, n, wk, wm)
    # This rank's trainable shard (a tied embedding once: the head reduces its
    # gradient, the embedding unit holds its optimizer state).
    params = sum(math.ceil((u.reduced if u.owned is None else u.owned) / g) for u in us)
    optimizer = params * sc.optimizer_s_per_param
    compute_total = sum(o[0] for o in ops) - tensor_total
    overlapped = overlapped_body + small + optimizer
    serial = compute_total + comm_total + small + optimizer
    step = sc.overlap * overlapped + (1.0 - sc.overlap) * serial
    return {
        "step_s": step,
        "overlapped_s": overlapped,
        "serial_s": serial,
        "compute_s": compute_total,
        "comm_s": comm_total + small,
        "exposed_comm_s": step - compute_total - optimizer,
        "optimizer_s": optimizer,
        "gather_s": sum(o[1] for o in ops),
        "reduce_scatter_s": sum(o[2] for o in ops),
        "all_reduce_s": sum(o[3] for o in ops),
        "tensor_s": tensor_total,
        "state_bytes_per_rank": 16 * params,
        "tensor_group": {"size": t, "nodes": tk, "per_node": tm},
        "shard_group": {"size": g, "nodes": gk, "per_node": gm,
                        "busbw": bus_bandwidth(net, gk, gm) if g > 1 else None},
        "replica_group": {"size": r, "nodes": rk, "per_node": rm,
                          "busbw": bus_bandwidth(net, rk, rm) if r > 1 else None},
    }


def predict(sc, n, g):
    """step_time() plus tokens/s/GPU and the efficiency against one node
    (gpus_per_node ranks, full sharding, the same T) at the same local batch."""
    out = step_time(sc, n, g)
    ref_n = sc.net.gpus_per_node
    ref = step_time(sc, ref_n, ref_n // sc.tensor)
    gpu_tokens = sc.tokens_per_rank() / sc.tensor
    out.update(n=n, g=g, t=sc.tensor, layout="full" if g * sc.tensor == n else "hsdp",
               tokens_per_s_per_gpu=gpu_tokens / out["step_s"],
               tokens_per_s_per_gpu_serial=gpu_tokens / out["serial_s"],
               tokens_per_s_per_gpu_overlapped=gpu_tokens / out["overlapped_s"],
               efficiency=ref["step_s"] / out["step_s"])
    return out


def calibrate(sc, ref_n, ref_g, ref_step_s):
    """The compute time per optimizer step that makes the model's step at
    (ref_n, ref_g) last ref_step_s (bisection: the step grows with compute)."""
    lo, hi = 0.0, ref_step_s
    if step_time(sc, ref_n, ref_g, compute_s=0.0)["step_s"] > ref_step_s:
        raise ValueError(
            "the measured step (%.4g s) is shorter than the modelled communication alone "
            "(%.4g s): the bandwidths are too low or the latencies too high for this measurement"
            % (ref_step_s, step_time(sc, ref_n, ref_g, compute_s=0.0)["step_s"]))
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if step_time(sc, ref_n, ref_g, compute_s=mid)["step_s"] < ref_step_s:
            lo = mid
        else:
            hi = mid
    return replace(sc, compute_s=0.5 * (lo + hi))


def layout_name(n, g, t=1):
    """scale_model.py's and the preflight's name of a layout (g in ranks of one tensor rank)."""
    name = "full sharding (G=%d)" % g if g * t == n else "HSDP G=%d" % g
    return name if t == 1 else "%s, T=%d" % (name, t)


def candidates(n, sc, groups, tensors):
    """The layouts advise() predicts: (g, t) for every T in `tensors` (and
    sc.tensor) that splits the shape, divides the GPUs per node and keeps the
    global batch whole, with full sharding and the HSDP groups of `groups`
    GPUs (whole tensor groups) that divide n; g counts ranks of one tensor rank."""
    out = []
    for t in sorted(set(tensors) | {sc.tensor}):
        if (n % t or sc.net.gpus_per_node % t
                or tensor_parallel_error(sc.shape, t, sc.seq_len, sc.sequence_parallel)):
            continue
        try:
            at_tensor(sc, t)
        except ValueError:
            continue
        out += [(ranks // t, t) for ranks in layouts(n, sc.net, groups) if ranks % t == 0]
    return out


def advise(n, g, sc, threshold=0.2, groups=(8, 16, 32, 64), max_state_bytes=None,
           tensors=(1,)):
    """What the preflight check layout.parallel mirrors: the predicted
    efficiency of shard group g at world n (and sc.tensor) and of the best
    layout, and whether g is far from the best (its step more than
    `threshold` longer), with the reason. g = 0 means full sharding (g = n /
    sc.tensor). Candidates: candidates(); with max_state_bytes, those whose
    model state per rank (16 bytes per parameter of the shard) exceeds it are
    left out (g itself is always predicted)."""
    g = n // sc.tensor if g in (0, None) else g
    mine_key = (g, sc.tensor)
    keys = sorted(set(candidates(n, sc, groups, tensors)) | {mine_key})
    preds = {k: predict(at_tensor(sc, k[1]), n, k[0]) for k in keys}
    if max_state_bytes is not None:
        keys = [k for k in keys
                if k == mine_key or preds[k]["state_bytes_per_rank"] <= max_state_bytes]
    # Ties: the larger group (less model state per rank), then the smaller T.
    best = min(keys, key=lambda k: (preds[k]["step_s"], -k[0] * k[1], k[1]))
    mine, top = preds[mine_key], preds[best]
    slower = mine["step_s"] / top["step_s"] - 1.0
    far = slower > threshold

    def name(k):
        return layout_name(n, k[0], k[1])

    if mine_key == best or slower <= 0:
        reason = "%s is the best predicted layout at %d GPUs (efficiency %.2f)" % (
            name(mine_key), n, mine["efficiency"])
    else:
        why = []
        if mine["exposed_comm_s"] > top["exposed_comm_s"]:
            why.append("%.3f s of communication not hidden behind compute against %.3f s"
                       % (mine["exposed_comm_s"], top["exposed_comm_s"]))
        sg = mine["shard_group"]
        if sg["nodes"] > 1:
            why.append("its all-gathers and reduce-scatters span %d nodes (%.0f GB/s bus "
                       "bandwidth, %d ring steps each)" % (sg["nodes"], sg["busbw"] / GB, g - 1))
        if mine["tensor_s"] > top["tensor_s"]:
            why.append("%.3f s of tensor-parallel collectives on the compute stream against "
                       "%.3f s" % (mine["tensor_s"], top["tensor_s"]))
        reason = "%s is predicted %.0f%% slower than %s at %d GPUs (efficiency %.2f against %.2f)%s" % (
            name(mine_key), 100 * slower, name(best), n, mine["efficiency"], top["efficiency"],
            ": " + "; ".join(why) if why else "")
    return {"n": n, "g": g, "t": sc.tensor, "efficiency": mine["efficiency"],
            "step_s": mine["step_s"], "best_g": best[0], "best_t": best[1],
            "best_efficiency": top["efficiency"], "best_step_s": top["step_s"],
            "slower": slower, "far": far, "threshold": threshold, "reason": reason}


# ---------------------------------------------------------------------------
# Reports.

TORCHTITAN = {
    # pytorch/torchtitan docs/performance.md, Tables 1 and 3: Llama-3.1-8B,
    # FSDP, selective activation checkpointing, local batch 2, seq 8192, H100
    # (96 GB HBM2e, 500 W), 400 Gb/s per GPU between hosts.
    "tokens_per_s_per_gpu": {8: 5762.0, 128: 5605.0},
}

# The documented tolerance of the model against torchtitan's 128-GPU figure.
TORCHTITAN_TOLERANCE = 0.05


def torchtitan_compute(sc):
    """The compute per step at torchtitan's 8-GPU rate, a figure without
    tensor parallelism: calibrated at T = 1 when the global batch allows it
    (a rank's compute per step is the same at any T), else at sc.tensor
    (the preflight's default calibration, StepTimeModel::calibrate_on_torchtitan)."""
    try:
        ref = at_tensor(sc, 1)
    except ValueError:
        ref = sc
    rate = TORCHTITAN["tokens_per_s_per_gpu"][8]
    gpus = -(-8 // ref.tensor) * ref.tensor  # whole tensor groups (T = 3, T = 16)
    return calibrate(ref, gpus, gpus // ref.tensor,
                     ref.tokens_per_rank() / ref.tensor / rate).compute_s


def torchtitan_scenario(**overrides):
    base = Scenario(shape=PRESETS["llama-3.1-8b"], seq_len=8192, micro_batch=2, micro_steps=1,
                    checkpointing="selective")
    base = replace(base, **overrides)
    ref = base.tokens_per_rank() / TORCHTITAN["tokens_per_s_per_gpu"][8]
    return calibrate(base, 8, 8, ref)


def torchtitan_check(**overrides):
    sc = torchtitan_scenario(**overrides)
    measured = TORCHTITAN["tokens_per_s_per_gpu"][128]
    full = predict(sc, 128, 128)
    out = {"compute_s": sc.compute_s,
           "measured_8": TORCHTITAN["tokens_per_s_per_gpu"][8],
           "measured_128": measured,
           "predicted_128": full["tokens_per_s_per_gpu"],
           "predicted_128_serial": full["tokens_per_s_per_gpu_serial"],
           "predicted_128_overlapped": full["tokens_per_s_per_gpu_overlapped"],
           "error": full["tokens_per_s_per_gpu"] / measured - 1.0,
           "tolerance": TORCHTITAN_TOLERANCE}
    for n in (128, 1024):
        p = predict(sc, n, 8)
        out["hsdp8_%d" % n] = p["tokens_per_s_per_gpu"]
        out["hsdp8_%d_serial" % n] = p["tokens_per_s_per_gpu_serial"]
        f = predict(sc, n, n)
        out["full_%d" % n] = f["tokens_per_s_per_gpu"]
        out["full_%d_serial" % n] = f["tokens_per_s_per_gpu_serial"]
    return out


def table(sc, worlds, groups):
    """Every layout of `groups` GPUs (whole tensor groups) at each world size, at sc.tensor."""
    rows = []
    t = sc.tensor
    for n in worlds:
        if n % t:
            continue
        preds = [predict(sc, n, x // t) for x in layouts(n, sc.net, groups) if x % t == 0]
        best = min(preds, key=lambda p: (p["step_s"], -p["g"]))
        for p in preds:
            p["best"] = p is best
            rows.append(p)
    return rows


def markdown(sc, rows):
    lines = ["| GPUs | layout | step s | tokens/s/GPU | efficiency | no-overlap tokens/s/GPU "
             "| comm s | exposed s | state GiB/rank | best |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for p in rows:
        lay = layout_name(p["n"], p["g"], p["t"]).replace("full sharding", "full")
        lines.append("| %d | %s | %.3f | %.0f | %.3f | %.0f | %.3f | %.3f | %.1f | %s |" % (
            p["n"], lay, p["step_s"], p["tokens_per_s_per_gpu"], p["efficiency"],
            p["tokens_per_s_per_gpu_serial"], p["comm_s"], p["exposed_comm_s"],
            p["state_bytes_per_rank"] / 2 ** 30, "**best**" if p["best"] else ""))
    return "\n".join(lines)


def pivot(rows, groups):
    """One line per world size: the efficiency of each layout and the best G."""
    cols = ["full"] + ["G=%d" % g for g in groups]
    lines = ["| GPUs | " + " | ".join(cols) + " | best | best tokens/s/GPU |",
             "|---" * (len(cols) + 3) + "|"]
    by_n = {}
    for p in rows:
        by_n.setdefault(p["n"], []).append(p)
    for n, preds in by_n.items():  # columns by GPUs per shard group (g x T)
        cells = {"full": "%.3f" % preds[0]["efficiency"]}
        for p in preds[1:]:
            cells["G=%d" % (p["g"] * p["t"])] = "%.3f" % p["efficiency"]
        best = [p for p in preds if p["best"]][0]
        lines.append("| %d | %s | %s | %.0f |" % (
            n, " | ".join(cells.get(c, "") for c in cols),
            "full" if best["g"] * best["t"] == n else "G=%d" % (best["g"] * best["t"]),
            best["tokens_per_s_per_gpu"]))
    return "\n".join(lines)


def describe(sc):
    net = sc.net
    return ("%s parameters, seq %d × micro-batch %d × %d micro-step(s) / T %d = %g tokens/GPU/step; "
            "compute %.4f s/step; gathers %d B, reduction %d B per element; checkpointing %s; "
            "HSDP all-reduce %s, %s stream; overlap %.2f; %d GPUs/node, intra %.0f GB/s, "
            "NIC %.0f GB/s/GPU (%s), alpha %.1f/%.1f/%.1f us (intra/inter/base)" % (
                "{:,}".format(sc.shape.parameters()), sc.seq_len, sc.micro_batch, sc.micro_steps,
                sc.tensor, sc.tokens_per_rank() / sc.tensor, sc.compute_s, sc.gather_bytes,
                sc.reduce_bytes,
                sc.checkpointing, sc.hsdp_allreduce, sc.replica_stream, sc.overlap,
                net.gpus_per_node, net.intra_busbw / GB, net.nic_bw / GB, net.inter_model,
                net.alpha_intra * 1e6, net.alpha_inter * 1e6, net.alpha_base * 1e6))


def metrics_step_time(path, skip=2):
    """Median step_time_s of a metrics.jsonl (nss_hpc), after `skip` steps,
    and the median comm_bytes."""
    times, comm = [], []
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if "step_time_s" in rec and not rec.get("skipped") and rec.get("step", 0) > skip:
                times.append(rec["step_time_s"])
                comm.append(rec.get("comm_bytes", 0))
    if not times:
        raise ValueError("%s: no step records after step %d" % (path, skip))
    return statistics.median(times), statistics.median(comm)


def model_comm_bytes(sc, n, g):
    """The step's bytes in the nccl-tests convention, as metrics.jsonl's comm_bytes
    counts them (docs/architecture.md), without the small all-reduces and the
    gradients summed over the tensor group."""
    recompute, gathers = CHECKPOINTING[sc.checkpointing]
    t = sc.tensor
    total = 0.0
    r = n // (g * t)
    if t > 1:  # bytes_tensor's activation terms
        forwards = 2 if recompute > 0 else 1
        sp = sc.sequence_parallel
        tokens = sc.micro_batch * sc.seq_len
        halves = (4 * sc.shape.layers * (forwards + 1) + forwards * (1 if sp else 2)
                  + (1 if sp else 0) + (forwards + 1 if sp else 2))
        total += sc.micro_steps * (t - 1) / t * (
            tokens * sc.shape.hidden * sc.gather_bytes * halves + 24 * tokens * forwards)
    for u in units(sc.shape, sc.seq_len, t):
        pg, pr = math.ceil(u.gathered / g) * g, math.ceil(u.reduced / g) * g
        total += sc.micro_steps * (g - 1) / g * (gathers * pg * sc.gather_bytes + pr * sc.reduce_bytes)
        if r > 1:
            times = sc.micro_steps if sc.hsdp_allreduce == "micro" else 1
            total += times * 2.0 * (r - 1) / r * (pr // g) * sc.reduce_bytes
    return total


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    m = p.add_argument_group("model shape")
    m.add_argument("--preset", default="llama-3.1-8b", help="one of: " + ", ".join(sorted(PRESETS)))
    for name in ("hidden", "intermediate", "layers", "heads", "kv-heads", "head-dim", "vocab"):
        m.add_argument("--" + name, type=int, help="override the preset's " + name)
    m.add_argument("--tied", choices=("yes", "no"), help="override the preset's tied embeddings")
    w = p.add_argument_group("workload")
    w.add_argument("--seq-len", type=int, default=8192)
    w.add_argument("--micro-batch", type=int, default=2, help="local batch per micro-step")
    w.add_argument("--micro-steps", type=int, default=1, help="micro-steps per optimizer step")
    w.add_argument("--gather-dtype", choices=("bf16", "fp32"), default="bf16")
    w.add_argument("--reduce-dtype", choices=("fp32", "bf16"), default="fp32")
    w.add_argument("--checkpointing", choices=sorted(CHECKPOINTING), default="unit",
                   help="unit: nss_hpc per-unit recompute (2 gathers); selective: torchtitan's "
                        "(2 gathers); none: 1 gather (default unit)")
    w.add_argument("--hsdp-allreduce", choices=("micro", "step"), default="micro",
                   help="HSDP replica all-reduce every micro-step, or once per optimizer step")
    w.add_argument("--replica-stream", choices=("separate", "shared", "blocking"),
                   default="separate",
                   help="HSDP all-reduces on their own stream, queued behind the gathers, or "
                        "waited for by the host (default separate)")
    w.add_argument("--tensor", type=int, default=1,
                   help="parallel.tensor_parallel_size T (--micro-steps are at this T; the "
                        "shard group --advise takes counts ranks of one tensor rank)")
    w.add_argument("--no-sequence-parallel", action="store_true",
                   help="parallel.sequence_parallel false: all-reduces instead of all-gathers "
                        "and reduce-scatters")
    w.add_argument("--loss-chunk", type=int, default=512, help="training.loss_chunk_tokens")
    w.add_argument("--overlap", type=float, default=1.0,
                   help="1: the simulated prefetch schedule; 0: no overlap; between: a mix")
    w.add_argument("--optimizer-s-per-param", type=float, default=2e-11,
                   help="AdamW seconds per parameter of the shard (default 2e-11, H100 fused)")
    c = p.add_argument_group("calibration (default: torchtitan's 5,762 tokens/s/GPU on 8 GPUs)")
    c.add_argument("--compute-s", type=float, help="forward + backward compute per step, no collectives")
    c.add_argument("--ref-tokens-per-s-per-gpu", type=float,
                   help="measured tokens/s/GPU at the reference layout (default 5762: torchtitan)")
    c.add_argument("--ref-step-s", type=float, help="measured step time at the reference layout")
    c.add_argument("--ref-metrics", help="nss_hpc metrics.jsonl of the reference run (median step_time_s)")
    c.add_argument("--ref-gpus", type=int, default=8)
    c.add_argument("--ref-group", type=int, default=0, help="reference shard group (0: full sharding)")
    c.add_argument("--ref-tensor", type=int, default=1,
                   help="the reference run's tensor parallel size (default 1, as torchtitan's "
                        "figure; a rank's compute per step is the same at any T)")
    n = p.add_argument_group("network")
    n.add_argument("--gpus-per-node", type=int, default=8)
    n.add_argument("--intra-gbps", type=float, default=450.0,
                   help="intra-node bus bandwidth per GPU, GB/s (nccl-tests busbw; default NVLink 450)")
    n.add_argument("--nic-gbit", type=float, default=400.0, help="inter-node bandwidth per GPU, Gb/s")
    n.add_argument("--inter-busbw-gbps", type=float,
                   help="measured nccl-tests all_gather bus bandwidth across nodes (GB/s, all "
                        "GPUs of each node in the run): sets the NIC bandwidth to it / GPUs per node")
    n.add_argument("--alpha-intra-us", type=float, default=3.4, help="ring step within a node")
    n.add_argument("--alpha-inter-us", type=float, default=14.0, help="ring step between nodes")
    n.add_argument("--alpha-base-us", type=float, default=8.4, help="per collective")
    n.add_argument("--inter-model", choices=("rails", "single-nic"), default="rails")
    o = p.add_argument_group("output")
    o.add_argument("--worlds", default="8,16,32,64,128,256,512,1024")
    o.add_argument("--groups", default="8,16,32,64", help="HSDP group sizes to try, in GPUs")
    o.add_argument("--tensors", default="1",
                   help="tensor parallel sizes --advise tries (e.g. 1,2,4,8)")
    o.add_argument("--json", action="store_true")
    o.add_argument("--pivot", action="store_true",
                   help="one line per world size: each layout's efficiency and the best")
    o.add_argument("--advise", nargs=2, type=int, metavar=("N", "G"),
                   help="advice for world N and shard group G (0: full sharding)")
    o.add_argument("--threshold", type=float, default=0.2)
    o.add_argument("--max-state-gib", type=float,
                   help="advice: leave out layouts whose model state per rank exceeds this")
    o.add_argument("--torchtitan", action="store_true",
                   help="the torchtitan 128-GPU comparison (ignores the workload options)")
    return p.parse_args(argv)


def scenario_from_args(a):
    shape = preset(a.preset)
    over = {k: getattr(a, k.replace("-", "_")) for k in
            ("hidden", "intermediate", "layers", "heads", "kv-heads", "head-dim", "vocab")}
    over = {k.replace("-", "_"): v for k, v in over.items() if v is not None}
    if a.tied is not None:
        over["tied"] = a.tied == "yes"
    shape = replace(shape, **over)
    nic = a.nic_gbit * 1e9 / 8
    if a.inter_busbw_gbps is not None:
        nic = a.inter_busbw_gbps * GB / a.gpus_per_node
    net = Network(gpus_per_node=a.gpus_per_node, intra_busbw=a.intra_gbps * GB, nic_bw=nic,
                  alpha_intra=a.alpha_intra_us * 1e-6, alpha_inter=a.alpha_inter_us * 1e-6,
                  alpha_base=a.alpha_base_us * 1e-6, inter_model=a.inter_model)
    sc = Scenario(shape=shape, seq_len=a.seq_len, micro_batch=a.micro_batch,
                  micro_steps=a.micro_steps, gather_bytes=2 if a.gather_dtype == "bf16" else 4,
                  reduce_bytes=4 if a.reduce_dtype == "fp32" else 2, checkpointing=a.checkpointing,
                  hsdp_allreduce=a.hsdp_allreduce, replica_stream=a.replica_stream, net=net,
                  optimizer_s_per_param=a.optimizer_s_per_param, overlap=a.overlap,
                  tensor=a.tensor, sequence_parallel=not a.no_sequence_parallel,
                  loss_chunk=a.loss_chunk)
    error = tensor_parallel_error(shape, a.tensor, a.seq_len, sc.sequence_parallel)
    if error:
        raise ValueError("--tensor %d: %s" % (a.tensor, error))
    notes = []
    if a.compute_s is not None:
        return replace(sc, compute_s=a.compute_s), notes
    ref = at_tensor(sc, a.ref_tensor)
    ref_g = a.ref_group or a.ref_gpus // a.ref_tensor
    if a.ref_metrics:
        ref_step, comm = metrics_step_time(a.ref_metrics)
        expect = model_comm_bytes(ref, a.ref_gpus, ref_g)
        if comm and abs(comm / expect - 1.0) > 0.02:
            notes.append("metrics comm_bytes %.4g differ from the model's %.4g by %.1f%%: "
                         "check the shape and workload options" % (comm, expect, 100 * (comm / expect - 1)))
    elif a.ref_step_s is not None:
        ref_step = a.ref_step_s
    else:
        if a.ref_tokens_per_s_per_gpu is None:
            a.ref_tokens_per_s_per_gpu = TORCHTITAN["tokens_per_s_per_gpu"][8]
            notes.append("compute calibrated on torchtitan's 5,762 tokens/s/GPU (Llama-3.1-8B, 8 "
                         "H100s); give --compute-s, --ref-step-s, --ref-metrics or "
                         "--ref-tokens-per-s-per-gpu for your own")
        ref_step = ref.tokens_per_rank() / ref.tensor / a.ref_tokens_per_s_per_gpu
    return replace(sc, compute_s=calibrate(ref, a.ref_gpus, ref_g, ref_step).compute_s), notes


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.torchtitan:
        res = {"rails": torchtitan_check(),
               "single-nic": torchtitan_check(net=Network(inter_model="single-nic"))}
        if a.json:
            print(json.dumps(res, indent=1))
            return 0
        for name, r in res.items():
            print("%s: compute %.4f s/step calibrated on %d tokens/s/GPU at 8 GPUs" % (
                name, r["compute_s"], r["measured_8"]))
            print("  128 GPUs full sharding: predicted %.0f (no overlap %.0f), measured %.0f: "
                  "error %+.1f%% (tolerance %.0f%%)" % (
                      r["predicted_128"], r["predicted_128_serial"], r["measured_128"],
                      100 * r["error"], 100 * r["tolerance"]))
            for n in (128, 1024):
                print("  %d GPUs: full %.0f (no overlap %.0f), HSDP G=8 %.0f (no overlap %.0f)" % (
                    n, r["full_%d" % n], r["full_%d_serial" % n], r["hsdp8_%d" % n],
                    r["hsdp8_%d_serial" % n]))
        return 0
    try:
        sc, notes = scenario_from_args(a)
    except ValueError as e:
        print("scale_model.py: %s" % e, file=sys.stderr)
        return 2
    groups = tuple(int(x) for x in a.groups.split(",") if x)
    try:
        return report(a, sc, notes, groups)
    except ValueError as e:
        print("scale_model.py: %s" % e, file=sys.stderr)
        return 2


def report(a, sc, notes, groups):
    if a.advise:
        res = advise(a.advise[0], a.advise[1], sc, a.threshold, groups,
                     None if a.max_state_gib is None else a.max_state_gib * 2 ** 30,
                     tuple(int(x) for x in a.tensors.split(",") if x))
        if a.json:
            print(json.dumps(res, indent=1))
        else:
            print(("WARNING: " if res["far"] else "ok: ") + res["reason"])
        return 0
    worlds = [int(x) for x in a.worlds.split(",") if x]
    rows = table(sc, worlds, groups)
    if a.json:
        print(json.dumps({"scenario": describe(sc), "compute_s": sc.compute_s, "notes": notes,
                          "units": [{"name": u.name, "gathered_elements": u.gathered,
                                     "reduced_elements": u.reduced}
                                    for u in units(sc.shape, sc.seq_len)],
                          "rows": rows,
                          "best": {str(p["n"]): p["g"] for p in rows if p["best"]}}, indent=1))
    else:
        print(describe(sc))
        for note in notes:
            print("note: " + note)
        print()
        print(pivot(rows, groups) if a.pivot else markdown(sc, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
