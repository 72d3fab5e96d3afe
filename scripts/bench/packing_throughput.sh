#!/usr/bin/env bash
# The cost of document-aware attention (docs/performance.md, "Packed
# documents"), side by side in one invocation:
#   1. nss_hpc training throughput at 1 rank with data.packing windows,
#      documents and none (long_documents: split) on the default data — the
#      same model, batch and tokens per step; repeated (NSS_BENCH_REPEATS,
#      default 3), interleaved, medians reported;
#   2. the attention kernel alone, forward + backward in libtorch's own ops
#      (PyTorch 1.13, as the CPU build links): plain causal, one
#      block-diagonal masked softmax over the row (what nss_hpc runs on a
#      GPU), and a loop over the documents of each row (what it runs on the
#      CPU), at seq_len 256 and 1024 with four documents a row.
# Shape: hidden 256, intermediate 688, 4 layers, 8 heads / 4 KV heads, seq 256,
# micro-batch 4, fp32, OMP_NUM_THREADS=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/throughput_common.sh
SHAPE+=(--set training.global_batch_size=4 --set data.long_documents=split)

run() {  # packing name
  median_tokens_per_s "$(bench_run 1 "$2" --set data.packing="$1")"
}

windows=() documents=() none=()
for r in $(seq "$REPEATS"); do
  windows+=("$(run windows windows_$r)")
  documents+=("$(run documents documents_$r)")
  none+=("$(run none none_$r)")
  echo "repeat $r: windows ${windows[-1]}, documents ${documents[-1]}, none ${none[-1]} tok/s" >&2
done
/usr/bin/python3 - "${windows[*]}" "${documents[*]}" "${none[*]}" <<'PY'
import statistics, sys
w, d, n = (statistics.median(map(float, a.split())) for a in sys.argv[1:4])
print("| nss_hpc, 1 rank, seq 256 | tokens/s (median) | / windows |")
print("|---|---|---|")
for name, value in (("data.packing: windows", w), ("data.packing: documents", d), ("data.packing: none", n)):
    print("| %s | %.0f | %.3f |" % (name, value, value / w))
PY

/usr/bin/python3 - "$REPEATS" <<'PY'
import statistics, sys, time
import torch
torch.set_num_threads(1)
repeats = int(sys.argv[1])

def causal(q, k, v):
    s = q.size(2)
    scores = (q @ k.transpose(2, 3)) / q.size(3) ** 0.5
    scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, -1) @ v

def block_diagonal(q, k, v, segments):
    s = q.size(2)
    allowed = (segments.unsqueeze(2) == segments.unsqueeze(1)) & torch.ones(s, s, dtype=torch.bool).tril()
    scores = (q @ k.transpose(2, 3)) / q.size(3) ** 0.5
    scores = scores.masked_fill(allowed.logical_not().unsqueeze(1), float("-inf"))
    return torch.softmax(scores, -1) @ v

def per_document(q, k, v, bounds):
    rows = []
    for b, row in enumerate(bounds):
        rows.append(torch.cat([causal(q[b:b + 1, :, a:e], k[b:b + 1, :, a:e], v[b:b + 1, :, a:e])
                               for a, e in row], dim=2))
    return torch.cat(rows, dim=0)

def timed(fn, *tensors):
    best = []
    for _ in range(repeats + 1):
        for t in tensors:
            t.grad = None
        start = time.perf_counter()
        fn().sum().backward()
        best.append(time.perf_counter() - start)
    return statistics.median(best[1:])

print()
print("| attention fwd+bwd, B 4, 8 heads, d 32, 4 documents a row | causal (windows) | block-diagonal mask | loop per document |")
print("|---|---|---|---|")
for s in (256, 1024):
    q, k, v = (torch.randn(4, 8, s, 32, requires_grad=True) for _ in range(3))
    cuts = [0, s // 5, s // 2, 3 * s // 4, s]
    bounds = [list(zip(cuts[:-1], cuts[1:]))] * 4
    segments = torch.zeros(4, s, dtype=torch.long)
    for i, (a, e) in enumerate(bounds[0]):
        segments[:, a:e] = i
    c = timed(lambda: causal(q, k, v), q, k, v)
    m = timed(lambda: block_diagonal(q, k, v, segments), q, k, v)
    l = timed(lambda: per_document(q, k, v, bounds), q, k, v)
    print("| seq_len %d | %.2f ms | %.2f ms (%.2fx) | %.2f ms (%.2fx) |" % (s, 1e3 * c, 1e3 * m, m / c, 1e3 * l, l / c))
PY
