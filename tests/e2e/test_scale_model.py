"""scripts/bench/scale_model.py, the FSDP/HSDP layout advisor
(docs/performance.md, "Scaling model (HSDP layout advice)"): the collective
formulas against hand computations, the unit sizes and bytes against
docs/model.md and docs/architecture.md, the degenerate HSDP layout, monotonic
behaviour, the torchtitan comparison within its documented tolerance, the
advice, tensor parallelism (parts, collectives on the compute stream, the
same global batch at another T, the advice over T), and the command line's JSON. Pure Python, no binaries, a few seconds."""
import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("NSS_SOURCE_DIR",
                        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SCRIPT = os.path.join(SOURCE, "scripts", "bench", "scale_model.py")

_spec = importlib.util.spec_from_file_location("scale_model", SCRIPT)
sm = importlib.util.module_from_spec(_spec)
sys.modules["scale_model"] = sm  # dataclasses resolve their module by name
_spec.loader.exec_module(sm)

GB = 1e9
EIGHT_B = sm.PRESETS["llama-3.1-8b"]


def run(*args):
    proc = subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True,
                          timeout=60)
    return proc


def short_step(seq_len, micro_batch=1, **overrides):
    """The 8B shape at torchtitan's per-token compute rate (5,762 tokens/s/GPU
    on one node) with a shorter step: seq_len × micro_batch tokens per GPU."""
    sc = sm.Scenario(shape=EIGHT_B, seq_len=seq_len, micro_batch=micro_batch, **overrides)
    return sm.calibrate(sc, 8, 8, sc.tokens_per_rank() / 5762.0)


class CollectiveFormulas(unittest.TestCase):
    # Round numbers so that every expectation below is worked out by hand.
    NET = sm.Network(gpus_per_node=8, intra_busbw=100 * GB, nic_bw=10 * GB, alpha_intra=1e-6,
                     alpha_inter=10e-6, alpha_base=2e-6)

    def test_all_gather_and_reduce_scatter_within_a_node(self):
        # (n-1) ring steps of 1 us + 2 us base + S (n-1)/n / busbw
        t = sm.all_gather_time(self.NET, 1e9, 8, 1, 8)
        self.assertAlmostEqual(t, 2e-6 + 7e-6 + 1e9 * 7 / 8 / 100e9, places=12)
        self.assertAlmostEqual(sm.reduce_scatter_time(self.NET, 1e9, 8, 1, 8), t, places=12)

    def test_all_gather_across_nodes(self):
        # 32 ranks on 4 nodes: 31 steps, 3 between nodes; rails: min(100, 8 NICs × 10) = 80 GB/s.
        t = sm.all_gather_time(self.NET, 1e9, 32, 4, 8)
        self.assertAlmostEqual(t, 2e-6 + 28 * 1e-6 + 3 * 10e-6 + 1e9 * 31 / 32 / 80e9, places=12)
        single = dataclasses.replace(self.NET, inter_model="single-nic")
        t = sm.all_gather_time(single, 1e9, 32, 4, 8)
        self.assertAlmostEqual(t, 2e-6 + 58e-6 + 1e9 * 31 / 32 / 10e9, places=12)

    def test_all_reduce(self):
        # Within a node: 2 (n-1)/n, tree latency 2·log2(8) = 6 levels < ring's 14 steps.
        t = sm.all_reduce_time(self.NET, 1e9, 8, 1, 8)
        self.assertAlmostEqual(t, 2e-6 + 6e-6 + 2 * 7 / 8 * 1e9 / 100e9, places=12)
        # 16 ranks, one per node (an HSDP replica group): one NIC each, tree 2·4 levels.
        t = sm.all_reduce_time(self.NET, 1e9, 16, 16, 1)
        self.assertAlmostEqual(t, 2e-6 + 80e-6 + 2 * 15 / 16 * 1e9 / 10e9, places=12)
        # Two ranks: the ring's 2 steps beat the tree's 2 levels only when equal: 2 us either way.
        t = sm.all_reduce_time(self.NET, 8, 2, 1, 2)
        self.assertAlmostEqual(t, 2e-6 + 2e-6 + 2 * 1 / 2 * 8 / 100e9, places=15)

    def test_bus_bandwidth_factors(self):
        # Without latency, time × busbw = S × the nccl-tests factor (doc/PERFORMANCE.md).
        net = dataclasses.replace(self.NET, alpha_intra=0, alpha_inter=0, alpha_base=0)
        for n in (2, 4, 8):
            self.assertAlmostEqual(sm.all_gather_time(net, 1e9, n, 1, n) * 100, (n - 1) / n)
            self.assertAlmostEqual(sm.reduce_scatter_time(net, 1e9, n, 1, n) * 100, (n - 1) / n)
            self.assertAlmostEqual(sm.all_reduce_time(net, 1e9, n, 1, n) * 100, 2 * (n - 1) / n)

    def test_one_rank_costs_nothing(self):
        for f in (sm.all_gather_time, sm.reduce_scatter_time, sm.all_reduce_time):
            self.assertEqual(f(self.NET, 1e9, 1, 1, 1), 0.0)

    def test_group_spans(self):
        net = sm.Network()
        self.assertEqual(sm.span(8, 1, net), (1, 8))       # a node
        self.assertEqual(sm.span(64, 1, net), (8, 8))      # G = 64: 8 nodes
        self.assertEqual(sm.span(16, 8, net), (16, 1))     # replicas of G = 8: one per node
        self.assertEqual(sm.span(4, 4, net), (2, 2))       # replicas of G = 4 at N = 16
        self.assertEqual(sm.bus_bandwidth(net, 1, 8), 450 * GB)
        self.assertEqual(sm.bus_bandwidth(net, 8, 8), 400 * GB)
        self.assertEqual(sm.bus_bandwidth(net, 16, 1), 50 * GB)


class ModelSizes(unittest.TestCase):
    def test_parameter_counts_match_docs_model_md(self):
        self.assertEqual(EIGHT_B.parameters(), 8030261248)
        self.assertEqual(sm.PRESETS["llama-3.2-1b"].parameters(), 1235814400)
        self.assertEqual(sm.preset("llama3.1-8b"), EIGHT_B)

    def test_units_cover_the_model(self):
        self.assertEqual(sum(u.gathered for u in sm.units(EIGHT_B, 8192)), EIGHT_B.parameters())
        one_b = sm.PRESETS["llama-3.2-1b"]  # tied: the head gathers the embedding again
        self.assertEqual(sum(u.gathered for u in sm.units(one_b, 2048)),
                         one_b.parameters() + one_b.vocab * one_b.hidden)
        self.assertEqual(len(sm.units(EIGHT_B, 8192)), EIGHT_B.layers + 2)

    def test_tied_embedding_has_one_optimizer_state(self):
        # 16 bytes per trainable parameter of the shard, the tied embedding once.
        one_b = sm.PRESETS["llama-3.2-1b"]
        sc = sm.Scenario(shape=one_b, seq_len=2048, micro_batch=1, compute_s=0.1)
        shard = sum(-(-x // 8) for x in [one_b.vocab * one_b.hidden]
                    + [one_b.block_params()] * one_b.layers + [one_b.hidden])
        self.assertEqual(sm.step_time(sc, 8, 8)["state_bytes_per_rank"], 16 * shard)

    def test_comm_bytes_follow_docs_architecture_md(self):
        # (N-1)/N × (2 Ψ b_gather + Ψ b_reduce) per micro-step, padded units.
        sc = sm.Scenario(shape=EIGHT_B)
        psi = sum(-(-u.gathered // 8) * 8 for u in sm.units(EIGHT_B, 8192))
        self.assertAlmostEqual(sm.model_comm_bytes(sc, 8, 8), 7 / 8 * (2 * psi * 2 + psi * 4))
        # HSDP adds 2 (R-1)/R × the shard in the reduction dtype per unit.
        psi16 = sum(-(-u.reduced // 8) * 8 for u in sm.units(EIGHT_B, 8192))
        self.assertAlmostEqual(sm.model_comm_bytes(sc, 16, 8),
                               7 / 8 * (2 * psi * 2 + psi * 4) + 2 * 1 / 2 * psi16 / 8 * 4)


class StepModel(unittest.TestCase):
    def test_full_sharding_in_one_node_is_hsdp_with_one_group(self):
        sc = short_step(2048)
        for n in (2, 4, 8):
            full = sm.step_time(sc, n, n)
            self.assertEqual(full["all_reduce_s"], 0.0)
            self.assertEqual(full["replica_group"]["size"], 1)
            self.assertEqual(sm.layouts(n, sc.net), [n])
        self.assertEqual(sm.advise(8, 0, sc), sm.advise(8, 8, sc))
        # G = N over several nodes is full sharding as well: no replica all-reduce.
        self.assertEqual(sm.step_time(sc, 64, 64)["all_reduce_s"], 0.0)
        self.assertGreater(sm.step_time(sc, 64, 8)["all_reduce_s"], 0.0)

    def test_more_bandwidth_or_less_latency_is_never_slower(self):
        for sc in (short_step(1024), short_step(8192, 2)):
            for n, g in ((8, 8), (64, 64), (64, 8), (512, 512), (512, 16), (1024, 64)):
                base = sm.step_time(sc, n, g)
                for faster in (dict(intra_busbw=900 * GB), dict(nic_bw=100 * GB),
                               dict(alpha_intra=1e-6), dict(alpha_inter=5e-6),
                               dict(alpha_base=0.0)):
                    quick = dataclasses.replace(sc, net=dataclasses.replace(sc.net, **faster))
                    t = sm.step_time(quick, n, g)
                    self.assertLessEqual(t["step_s"], base["step_s"] * (1 + 1e-12), (n, g, faster))
                    self.assertLessEqual(t["serial_s"], base["serial_s"] * (1 + 1e-12))
                more = sm.step_time(sc, n, g, compute_s=sc.compute_s * 1.5)
                self.assertGreater(more["step_s"], base["step_s"])
                self.assertLessEqual(base["overlapped_s"], base["serial_s"])
                self.assertGreaterEqual(base["overlapped_s"], base["compute_s"])

    def test_overlap_fraction_interpolates(self):
        sc = short_step(2048)
        lo = sm.step_time(dataclasses.replace(sc, overlap=0.0), 512, 512)
        hi = sm.step_time(dataclasses.replace(sc, overlap=1.0), 512, 512)
        mid = sm.step_time(dataclasses.replace(sc, overlap=0.5), 512, 512)
        self.assertAlmostEqual(lo["step_s"], hi["serial_s"])
        self.assertAlmostEqual(mid["step_s"], 0.5 * (hi["serial_s"] + hi["overlapped_s"]))

    def test_calibration_reproduces_the_reference(self):
        sc = sm.Scenario(shape=EIGHT_B, seq_len=4096, micro_batch=1, micro_steps=3)
        cal = sm.calibrate(sc, 16, 8, 2.5)
        self.assertAlmostEqual(sm.step_time(cal, 16, 8)["step_s"], 2.5, places=9)
        with self.assertRaises(ValueError):  # faster than its own communication
            sm.calibrate(sc, 1024, 1024, 0.01)

    def test_blocking_replica_all_reduce_exposes_it(self):
        sc = short_step(2048)
        t = {m: sm.step_time(dataclasses.replace(sc, replica_stream=m), 128, 8)["step_s"]
             for m in ("separate", "shared", "blocking")}
        self.assertLessEqual(t["separate"], t["shared"])
        self.assertLess(t["shared"], t["blocking"])


class Torchtitan(unittest.TestCase):
    def test_128_gpu_prediction_within_the_documented_tolerance(self):
        r = sm.torchtitan_check()
        self.assertGreater(r["compute_s"], 0)
        self.assertLessEqual(abs(r["error"]), sm.TORCHTITAN_TOLERANCE, r)
        # The measurement lies between the no-overlap and full-overlap bounds.
        self.assertLess(r["predicted_128_serial"], r["measured_128"])
        self.assertGreater(r["predicted_128_overlapped"], r["measured_128"])
        # The reference itself is reproduced.
        sc = sm.torchtitan_scenario()
        self.assertAlmostEqual(sm.predict(sc, 8, 8)["tokens_per_s_per_gpu"], 5762.0, places=3)

    def test_not_flagged_where_torchtitan_measured_97_percent(self):
        sc = sm.torchtitan_scenario()
        res = sm.advise(128, 0, sc)
        self.assertFalse(res["far"], res)


class Advice(unittest.TestCase):
    def test_flags_full_sharding_over_64_nodes_for_short_steps(self):
        res = sm.advise(512, 0, short_step(1024))
        self.assertTrue(res["far"], res)
        self.assertNotEqual(res["best_g"], 512)
        self.assertGreater(res["best_efficiency"], res["efficiency"])
        self.assertIn("span 64 nodes", res["reason"])
        self.assertIn("slower than HSDP G=", res["reason"])
        # The suggested layout is not itself far from the best.
        self.assertFalse(sm.advise(512, res["best_g"], short_step(1024))["far"])

    def test_flags_full_sharding_over_128_nodes_at_2048_tokens(self):
        self.assertTrue(sm.advise(1024, 0, short_step(2048))["far"])

    def test_flags_full_sharding_over_64_nodes_when_rings_use_one_nic(self):
        sc = short_step(4096, net=sm.Network(inter_model="single-nic"))
        res = sm.advise(512, 0, sc)
        self.assertTrue(res["far"], res)
        self.assertEqual(res["best_g"], 8)

    def test_memory_limit_removes_candidates(self):
        sc = short_step(1024)
        res = sm.advise(512, 0, sc, max_state_bytes=2 * 2 ** 30)  # G ≥ 64 fits 2 GiB of state
        self.assertGreaterEqual(res["best_g"], 64)


class CommandLine(unittest.TestCase):
    def test_json_table(self):
        proc = run("--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        worlds = [8, 16, 32, 64, 128, 256, 512, 1024]
        self.assertEqual(sorted(int(n) for n in out["best"]), worlds)
        self.assertGreater(out["compute_s"], 0)
        rows = out["rows"]
        for n in worlds:
            gs = sorted(r["g"] for r in rows if r["n"] == n)
            self.assertEqual(gs, sorted(sm.layouts(n, sm.Network())))
            self.assertEqual(sum(1 for r in rows if r["n"] == n and r["best"]), 1)
        ref = [r for r in rows if r["n"] == 8][0]
        self.assertAlmostEqual(ref["efficiency"], 1.0)
        for key in ("step_s", "tokens_per_s_per_gpu", "efficiency", "serial_s", "overlapped_s",
                    "state_bytes_per_rank"):
            self.assertIn(key, ref)

    def test_json_advice_and_torchtitan(self):
        proc = run("--advise", "512", "0", "--seq-len", "1024", "--micro-batch", "1", "--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        res = json.loads(proc.stdout)
        self.assertTrue(res["far"])
        self.assertEqual(res["g"], 512)
        proc = run("--torchtitan", "--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("error", json.loads(proc.stdout)["rails"])
        proc = run("--advise", "512", "0", "--seq-len", "1024", "--micro-batch", "1")
        self.assertTrue(proc.stdout.startswith("WARNING: full sharding (G=512)"), proc.stdout)

    def test_markdown_and_errors(self):
        proc = run("--pivot", "--worlds", "8,64")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("| 64 |", proc.stdout)
        proc = run("--advise", "24", "16")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("must divide", proc.stderr)
        proc = run("--ref-step-s", "0.001", "--ref-gpus", "1024")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("shorter than the modelled communication", proc.stderr)

    def test_reference_from_metrics_jsonl(self):
        sc = sm.Scenario(shape=EIGHT_B, seq_len=2048, micro_batch=1)
        comm = sm.model_comm_bytes(sc, 8, 8)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "metrics.jsonl")
            with open(path, "w") as f:
                f.write(json.dumps({"event": "memory"}) + "\n")
                for step, t in enumerate([9.0, 9.0, 0.40, 0.42, 0.41], start=1):
                    f.write(json.dumps({"step": step, "step_time_s": t, "comm_bytes": comm,
                                        "skipped": False}) + "\n")
            args = ["--ref-metrics", path, "--seq-len", "2048", "--micro-batch", "1", "--json"]
            out = json.loads(run(*args).stdout)
            self.assertEqual(out["notes"], [])
            ref = [r for r in out["rows"] if r["n"] == 8][0]
            self.assertAlmostEqual(ref["step_s"], 0.41, places=6)  # median of steps 3..5
            out = json.loads(run(*(args + ["--layers", "16"])).stdout)
            self.assertIn("comm_bytes", out["notes"][0])


class TensorParallelism(unittest.TestCase):
    TINY = sm.Shape(hidden=64, intermediate=176, layers=2, heads=4, kv_heads=2, head_dim=16,
                    vocab=258, tied=False)
    NET = sm.Network(gpus_per_node=8, intra_busbw=100 * GB, nic_bw=10 * GB, alpha_intra=1e-6,
                     alpha_inter=10e-6, alpha_base=2e-6)

    def test_a_ranks_parts(self):
        # T = 4: one head, the 2 key/value heads replicated (one per rank),
        # 44 MLP features, ceil(258 / 4) = 65 vocabulary rows; norms whole.
        units = sm.units(self.TINY, 32, 4)
        self.assertEqual(units[0].gathered, 65 * 64)
        matrices = 2 * 64 * 16 + 2 * 64 * 16 + 3 * 64 * 44
        self.assertEqual(units[1].gathered, matrices + 2 * 64)
        self.assertEqual(units[1].flops_weight, 2.0 * matrices + 4.0 * 32 * 1 * 16)
        self.assertEqual(units[-1].gathered, 64 + 65 * 64)
        self.assertEqual(sm.units(self.TINY, 32, 1), sm.units(self.TINY, 32))
        self.assertIn("heads (4)", sm.tensor_parallel_error(self.TINY, 3, 32) or "")
        six = dataclasses.replace(self.TINY, heads=12, kv_heads=6)
        self.assertIn("key/value heads (6)", sm.tensor_parallel_error(six, 4, 32) or "")
        self.assertIsNotNone(sm.tensor_parallel_error(self.TINY, 4, 30))  # sequence parallel
        self.assertIsNone(sm.tensor_parallel_error(self.TINY, 4, 30, sequence_parallel=False))

    def test_collectives_on_the_compute_stream(self):
        # One micro-step of 2 x 32 tokens at T = 2 with recompute, sequence
        # parallel: every block moves two regions (an all-gather and a
        # reduce-scatter of the hidden states each) in each of its two
        # forwards and its backward, and sums its two norms' gradients.
        sc = sm.Scenario(shape=self.TINY, seq_len=32, micro_batch=2, micro_steps=1, tensor=2,
                         net=self.NET, compute_s=0.0, loss_chunk=16)
        hidden = 2 * 32 * 64 * 2
        ag = sm.all_gather_time(self.NET, hidden, 2, 1, 2)
        norm = sm.all_reduce_time(self.NET, 64 * 2, 2, 1, 2)
        loss = 3 * 4 * sm.all_reduce_time(self.NET, 4 * 16, 2, 1, 2)
        block = 3 * 2 * 2 * ag + 2 * norm  # forward, recompute, backward (with the norms)
        embedding = ag + ag + ag  # reduce-scatter forward (twice: recompute), gather backward
        head = 2 * (ag + loss) + ag + norm
        step = sm.step_time(sc, 2, 1)
        self.assertAlmostEqual(step["tensor_s"], 2 * block + embedding + head, places=15)
        self.assertEqual(step["tensor_group"], {"size": 2, "nodes": 1, "per_node": 2})
        # Without compute or shard group collectives the step is the tensor
        # collectives, the small all-reduces and AdamW in sequence.
        self.assertAlmostEqual(step["compute_s"], 0.0, places=15)
        self.assertAlmostEqual(step["exposed_comm_s"], step["comm_s"], places=12)
        # Without sequence parallelism a region is an all-reduce of the same buffer.
        no_sp = sm.step_time(dataclasses.replace(sc, sequence_parallel=False), 2, 1)
        ar = sm.all_reduce_time(self.NET, hidden, 2, 1, 2)
        self.assertAlmostEqual(no_sp["tensor_s"],
                               2 * (2 * 2 * ar + 2 * ar) + 2 * ar + 2 * loss + ar, places=15)

    def test_the_same_global_batch_at_another_t(self):
        sc = short_step(2048, micro_steps=2)
        self.assertEqual(sm.at_tensor(sc, 4).micro_steps, 8)
        self.assertEqual(sm.at_tensor(sm.at_tensor(sc, 4), 2).micro_steps, 4)
        with self.assertRaises(ValueError):  # 3 micro-steps at T = 2 are 1.5 at T = 1
            sm.at_tensor(dataclasses.replace(sc, micro_steps=3, tensor=2), 1)
        with self.assertRaises(ValueError):  # 2 micro-steps at T = 4 are half of one at T = 1
            sm.at_tensor(dataclasses.replace(sc, tensor=4), 1)
        # A rank's tokens per GPU and compute are the same; T adds collectives.
        t1, t4 = sm.predict(sc, 8, 8), sm.predict(sm.at_tensor(sc, 4), 8, 2)
        self.assertGreater(t4["tensor_s"], 0.0)
        self.assertAlmostEqual(t4["compute_s"], t1["compute_s"], places=9)
        self.assertLess(t4["tokens_per_s_per_gpu"], t1["tokens_per_s_per_gpu"])
        # The same share of the split tensors; the norms whole on every tensor rank.
        self.assertGreater(t4["state_bytes_per_rank"], t1["state_bytes_per_rank"])
        self.assertLess(t4["state_bytes_per_rank"], 1.001 * t1["state_bytes_per_rank"])

    def test_advice_over_t(self):
        sc = short_step(2048)
        keys = sm.candidates(64, sc, (8, 16, 32, 64), (1, 2, 4, 8))
        self.assertIn((32, 2), keys)  # full sharding at T = 2
        self.assertIn((1, 8), keys)   # HSDP of one node's tensor group
        self.assertNotIn((64, 2), keys)
        advice = sm.advise(64, 0, sm.at_tensor(sc, 8), tensors=(1, 2, 4, 8))
        self.assertEqual((advice["t"], advice["best_t"]), (8, 1))
        self.assertIn("tensor-parallel collectives on the compute stream", advice["reason"])
        proc = run("--advise", "64", "0", "--tensor", "8", "--micro-steps", "8", "--tensors",
                   "1,2,4,8", "--seq-len", "2048", "--micro-batch", "1", "--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["best_t"], 1)
        proc = run("--tensor", "3")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--tensor 3", proc.stderr)


if __name__ == "__main__":
    unittest.main()
