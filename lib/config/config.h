// The run configuration: one struct per component, with defaults and a line
// of documentation per key. Each struct's visit() is its schema: the YAML
// reader, the writer and the reference documentation all walk it, so a key
// cannot exist in one and be missing from another. Every number key declares
// its range there too (value_range.h). docs/configuration.md is the
// user-facing reference.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config/auto_number.h"
#include "config/choices.h"
#include "config/resume_setting.h"
#include "config/value_range.h"

namespace nss::config {

/// Step counts and intervals: 10^12 steps is beyond any run's lifetime.
inline constexpr std::int64_t kMaxSteps = 1'000'000'000'000;
/// Timeouts: one week; beyond it a deadline would outlive any job.
inline constexpr double kMaxTimeoutSeconds = 604800.0;
/// parallel.shard_group_size: 0 (all ranks) up to far beyond any machine.
inline constexpr Range<std::int64_t> kShardGroupRange{0, std::int64_t{1} << 24};
/// parallel.tensor_parallel_size: the ranks of one node (1024 is beyond any).
inline constexpr Range<std::int64_t> kTensorParallelRange{1, 1024};
/// data.seq_len, shared with nss_eval --seq-len (nss_prepare_data
/// --max-tokens goes one further: the longest row a run can train on).
inline constexpr Range<std::int64_t> kSeqLenRange{1, std::int64_t{1} << 20};
/// training.micro_batch_size, shared with nss_eval --batch-size.
inline constexpr Range<std::int64_t> kMicroBatchRange{1, 65536};
/// eval.batches, shared with nss_eval --batches.
inline constexpr Range<std::int64_t> kEvalBatchesRange{1, 1'000'000};
/// Model widths (hidden_size, head_dim): 4x Llama-3.1-405B's 16384.
inline constexpr std::int64_t kMaxWidth = 65536;
/// Context lengths and vocabularies: 2^24 (16.7M) is beyond any published model's.
inline constexpr std::int64_t kMaxPositions = std::int64_t{1} << 24;

struct RunConfig {
  std::string name = "default";
  std::string output_dir;  // empty: runs/<name>
  std::int64_t seed = 1234;

  template <class V>
  void visit(V& v) {
    v.field("name", name, "Run name; the default output directory is runs/<name>.");
    v.field("output_dir", output_dir,
            "Run directory (logs, metrics, checkpoints); empty means runs/<name>.");
    v.field("seed", seed, "Seed for initialisation, data order and dropout.",
            {0, std::numeric_limits<std::int64_t>::max()});
  }
};

struct RopeScalingConfig {
  RopeScaling type = RopeScaling::kNone;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  std::int64_t original_max_position_embeddings = 8192;

  template <class V>
  void visit(V& v) {
    v.field("type", type, "RoPE scaling (Hugging Face rope_type).");
    v.field("factor", factor, "Scaling factor (linear and llama3).", {1, 1024});
    v.field("low_freq_factor", low_freq_factor, "llama3: low-frequency factor.",
            open_closed(0, 1024));
    v.field("high_freq_factor", high_freq_factor, "llama3: high-frequency factor.",
            open_closed(0, 1024));
    v.field("original_max_position_embeddings", original_max_position_embeddings,
            "llama3: context length the model was pretrained with.", {1, kMaxPositions});
  }
};

struct ModelConfig {
  std::string preset = "tiny";
  std::string from_pretrained;
  std::int64_t hidden_size = 64;
  std::int64_t intermediate_size = 176;
  std::int64_t num_hidden_layers = 2;
  std::int64_t num_attention_heads = 4;
  std::int64_t num_key_value_heads = 2;  // 0: same as num_attention_heads
  std::int64_t head_dim = 16;            // 0: hidden_size / num_attention_heads
  std::int64_t vocab_size = 258;
  std::int64_t max_position_embeddings = 1024;
  double rms_norm_eps = 1e-5;
  double rope_theta = 10000.0;
  RopeScalingConfig rope_scaling;
  bool tie_word_embeddings = false;
  // The family (lib/arch) and the keys only some families read.
  std::string family = "llama";
  bool attention_bias = false;
  std::int64_t sliding_window = 0;
  std::vector<std::string> layer_types;
  double rope_local_theta = 0;
  double query_pre_attn_scalar = 0;

  template <class V>
  void visit(V& v) {
    v.field("preset", preset,
            "Named shape (tiny, llama-3.2-1b, llama-3.2-3b, llama-3.1-8b, smollm2-135m, "
            "smollm2-360m, smollm2-1.7b, tinyllama-1.1b, qwen2.5-0.5b, qwen3-0.6b, "
            "mistral-7b-v0.1, smollm3-3b, gemma3-1b: docs/model.md); a family's sets its family "
            "keys too; explicit keys override it.");
    v.field("from_pretrained", from_pretrained,
            "Hugging Face model to start from: a local directory (config.json + "
            "safetensors), else Org/Name[@revision] in the local Hugging Face cache (never "
            "downloaded); its config.json defines the shape.");
    v.field("hidden_size", hidden_size, "Model width.", {1, kMaxWidth});
    v.field("intermediate_size", intermediate_size, "SwiGLU MLP width.", {1, 4 * kMaxWidth});
    v.field("num_hidden_layers", num_hidden_layers, "Number of decoder blocks.", {1, 1024});
    v.field("num_attention_heads", num_attention_heads, "Query heads.", {1, 1024});
    v.field("num_key_value_heads", num_key_value_heads,
            "Key/value heads (grouped-query attention); 0 means num_attention_heads.", {0, 1024});
    v.field("head_dim", head_dim, "Per-head width; 0 means hidden_size / num_attention_heads.",
            {0, kMaxWidth});
    v.field("vocab_size", vocab_size, "Vocabulary size (embedding rows).", {1, kMaxPositions});
    v.field("max_position_embeddings", max_position_embeddings,
            "Longest sequence the model supports.", {1, kMaxPositions});
    v.field("rms_norm_eps", rms_norm_eps, "RMSNorm epsilon.", open_closed(0, 1));
    v.field("rope_theta", rope_theta, "RoPE base frequency.", open_closed(0, 1e12));
    v.section("rope_scaling", rope_scaling, "RoPE scaling (Hugging Face rope_scaling).");
    v.field("tie_word_embeddings", tie_word_embeddings,
            "Share the embedding matrix with the LM head (Llama-3.2, SmolLM2).");
    v.field("family", family,
            "Model family (docs/model.md): llama, qwen2, qwen3, mistral, smollm3, gemma3; "
            "config.json's model_type sets it with model.from_pretrained.");
    v.field("attention_bias", attention_bias,
            "q, k, v and o projections with bias (Llama, Qwen3, SmolLM3, Gemma 3 key; Qwen2 "
            "always has q, k, v biases).");
    v.field("sliding_window", sliding_window,
            "Keys a sliding-window layer attends to: the query and sliding_window - 1 before "
            "it; 0: none.",
            {0, kMaxPositions});
    v.field("layer_types", layer_types,
            "Per layer: full_attention, sliding_attention or full_attention_no_rope; empty: "
            "every layer full attention with RoPE.");
    v.field("rope_local_theta", rope_local_theta,
            "RoPE base of the sliding-window layers, without rope_scaling (Gemma 3's "
            "rope_local_base_freq); 0: rope_theta.",
            {0, 1e12});
    v.field("query_pre_attn_scalar", query_pre_attn_scalar,
            "Attention scores scaled by query_pre_attn_scalar^-1/2 (Gemma 3); 0: head_dim.",
            {0, 1e9});
  }
};

struct DataConfig {
  std::string path = "data/default/train.h5";
  std::int64_t seq_len = 128;
  Packing packing = Packing::kWindows;
  LongDocuments long_documents = LongDocuments::kTruncate;
  std::int64_t num_workers = 1;
  std::int64_t prefetch_factor = 2;

  template <class V>
  void visit(V& v) {
    v.field("path", path, "Token dataset (HDF5 with a contiguous /tokens, see docs/data.md).");
    v.field("seq_len", seq_len,
            "Tokens per training sequence (samples are windows of seq_len + 1 tokens).",
            kSeqLenRange);
    v.field("packing", packing,
            "windows: fixed windows across documents; documents: whole documents packed into "
            "rows, each attending only to itself; none: one document per row, padded.");
    v.field("long_documents", long_documents,
            "With packing documents or none, a document longer than seq_len + 1 tokens: "
            "truncate keeps its start, split cuts it into pieces (positions restart).");
    v.field("num_workers", num_workers, "Dataloader threads per rank (0: load on the caller).",
            {0, 256});
    v.field("prefetch_factor", prefetch_factor,
            "Micro-batches queued per worker (the queue holds num_workers x prefetch_factor).",
            {1, 1024});
  }
};

struct EvalConfig {
  std::string path;
  std::int64_t interval_steps = 0;
  std::int64_t batches = 4;

  template <class V>
  void visit(V& v) {
    v.field("path", path, "Held-out token dataset for validation; empty disables validation.");
    v.field("interval_steps", interval_steps, "Validate every N optimizer steps (0: never).",
            {0, kMaxSteps});
    v.field("batches", batches, "Global batches scored per validation.", kEvalBatchesRange);
  }
};

struct LoraConfig {
  bool enabled = false;
  std::int64_t rank = 8;
  double alpha = 16.0;
  double dropout = 0.0;
  std::vector<std::string> targets = {"q_proj", "k_proj", "v_proj", "o_proj"};
  QuantizeBase quantize_base = QuantizeBase::kNone;
  bool double_quant = false;

  template <class V>
  void visit(V& v) {
    v.field("enabled", enabled, "Train LoRA adapters instead of the full model.");
    v.field("rank", rank, "Adapter rank r.", {1, kMaxWidth});
    v.field("alpha", alpha, "Adapter scale numerator (scale = alpha / rank).", open_closed(0, 1e6));
    v.field("dropout", dropout, "Dropout on the adapter input.", closed_open(0, 1));
    v.field("targets", targets,
            "Projections that get adapters: q_proj k_proj v_proj o_proj gate_proj up_proj "
            "down_proj.");
    v.field("quantize_base", quantize_base,
            "Store the frozen base's seven projections in 4-bit NF4 (QLoRA); the embedding, an "
            "untied lm_head and the norms stay in the compute dtype. Needs enabled: true.");
    v.field("double_quant", double_quant,
            "With quantize_base: nf4, quantise the block scales too (8-bit, groups of 256): "
            "about 4.13 instead of 4.5 bits per base parameter.");
  }
};

struct TrainingConfig {
  std::int64_t global_batch_size = 8;
  std::int64_t micro_batch_size = 2;
  std::int64_t max_steps = 100;
  double lr = 3e-4;
  double min_lr = 3e-5;
  std::int64_t warmup_steps = 10;
  LrSchedule lr_schedule = LrSchedule::kCosine;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;
  ComputeDtype dtype = ComputeDtype::kAuto;
  Recompute activation_checkpointing = Recompute::kFull;
  std::int64_t loss_chunk_tokens = 512;
  bool weight_decay_embeddings = false;
  std::int64_t max_skipped_steps = 5;
  LoraConfig lora;

  template <class V>
  void visit(V& v) {
    v.field("global_batch_size", global_batch_size,
            "Sequences per optimizer step over all ranks (independent of the world size).",
            {1, 16'777'216});
    v.field("micro_batch_size", micro_batch_size,
            "Sequences per rank per forward/backward; accumulation steps = global_batch_size / "
            "(micro_batch_size x world size).",
            kMicroBatchRange);
    v.field("max_steps", max_steps, "Optimizer steps to train.", {1, kMaxSteps});
    v.field("lr", lr, "Peak learning rate.", open_closed(0, 10));
    v.field("min_lr", min_lr, "Learning rate at the end of the decay.", {0, 10});
    v.field("warmup_steps", warmup_steps, "Linear warmup steps from 0 to lr.", {0, kMaxSteps});
    v.field("lr_schedule", lr_schedule, "Decay after warmup.");
    v.field("weight_decay", weight_decay,
            "AdamW decoupled weight decay (not applied to norms and embeddings).", {0, 10});
    v.field("beta1", beta1, "AdamW beta1.", closed_open(0, 1));
    v.field("beta2", beta2, "AdamW beta2.", closed_open(0, 1));
    v.field("eps", eps, "AdamW epsilon.", open_closed(0, 1));
    v.field("grad_clip", grad_clip, "Global gradient-norm clip (0: off).", {0, 1e6});
    v.field("dtype", dtype,
            "Gather/compute dtype; auto is fp32 on CPU and bf16 on GPU; master weights and "
            "gradient reduction stay fp32.");
    v.field("activation_checkpointing", activation_checkpointing,
            "What each unit recomputes in backward instead of keeping from forward. full: "
            "everything (only the unit's input is kept); selective: everything but each "
            "decoder block's attention, whose output and what its backward reads are kept "
            "(more memory than full, one attention fewer per block); none: nothing (every "
            "activation is kept). true and false still mean full and none.");
    v.field("loss_chunk_tokens", loss_chunk_tokens,
            "Tokens per chunk of the fused LM head and cross-entropy: the [tokens, vocab] "
            "logits exist one chunk at a time (512 x 128k fp32 = 256 MiB) and the head's "
            "gradients are computed in its forward, at the cost of an unsharded fp32 "
            "vocab x hidden head-weight gradient. 0: the unchunked head (all logits at once).",
            {0, 1'048'576});
    v.field("weight_decay_embeddings", weight_decay_embeddings,
            "Apply weight decay to the embedding (and a tied LM head) as well.");
    v.field("max_skipped_steps", max_skipped_steps,
            "Stop (exit 1) after this many consecutive steps whose loss or gradient norm is "
            "not finite; each such step is skipped on every rank.",
            {1, 1'000'000});
    v.section("lora", lora, "Low-rank adapters (PEFT-compatible).");
  }
};

struct ParallelConfig {
  Backend backend = Backend::kAuto;
  double collective_timeout_s = 600.0;
  bool share_devices = false;
  std::int64_t shard_group_size = 0;  // 0: all ranks
  std::int64_t tensor_parallel_size = 1;
  bool sequence_parallel = true;
  ReshardPolicy reshard_after_forward = ReshardPolicy::kAuto;
  bool offload_optimizer = false;

  template <class V>
  void visit(V& v) {
    v.field("backend", backend, "Collectives; auto is NCCL for CUDA tensors, else MPI.");
    v.field("collective_timeout_s", collective_timeout_s,
            "A collective unfinished after this many seconds ends the job with exit 6 and "
            "names the rank that is behind.",
            open_closed(0, kMaxTimeoutSeconds));
    v.field("share_devices", share_devices,
            "GPU runs: let several ranks of a node share one CUDA device (local rank modulo "
            "visible devices); false makes more ranks than devices a usage error (exit 2).");
    v.field("shard_group_size", shard_group_size,
            "Hybrid sharding (HSDP): shard the model within groups of this many consecutive "
            "ranks and replicate it across the groups; set it to the GPUs per node so that "
            "all-gathers never leave a node. 0: one group of all ranks (full sharding). Must "
            "divide the number of ranks (with tensor parallelism: the number of ranks / "
            "tensor_parallel_size).",
            kShardGroupRange);
    v.field("tensor_parallel_size", tensor_parallel_size,
            "Tensor parallelism (Megatron's plan): every decoder block's attention heads and MLP "
            "features, and the embedding's and the head's vocabulary, are split over this many "
            "consecutive ranks of one node, which read the same batches; FSDP/HSDP shard each "
            "split over the other ranks. 1: off. Must divide the ranks per node, "
            "model.num_attention_heads and model.intermediate_size, and divide or be a multiple "
            "of model.num_key_value_heads (docs/architecture.md, \"Tensor parallelism\").",
            kTensorParallelRange);
    v.field("sequence_parallel", sequence_parallel,
            "With tensor_parallel_size > 1: split the residual stream, the norms and the "
            "embedding's output along the sequence over the tensor ranks as well, so that the "
            "activations outside attention and the MLP are tensor_parallel_size times smaller "
            "(data.seq_len must be a multiple of tensor_parallel_size). No effect at 1.");
    v.field("reshard_after_forward", reshard_after_forward,
            "Free each unit's gathered parameters after its forward (true) or keep them until "
            "its backward (false: one all-gather per unit instead of two, but every unit's "
            "gathered parameters are held from its forward to its backward). auto: true with "
            "training.activation_checkpointing full or selective, false with none; true with "
            "none is a usage error.");
    v.field("offload_optimizer", offload_optimizer,
            "GPU runs: keep the fp32 masters and AdamW moments in pinned host memory (the device "
            "keeps the compute-dtype shard and the fp32 gradient) and stream them through the "
            "device in chunks for the optimizer step. CPU runs refuse it (exit 2). Bitwise "
            "equal to the ordinary step in the CPU tests (offload_test); to verify it on your "
            "GPU, run offloaded_adamw_test from a CUDA build: its CUDA cases must pass, not "
            "skip (docs/gpu.md).");
  }
};

struct PrivacyConfig {
  bool enabled = false;
  double target_epsilon = 8.0;
  double noise_multiplier = 0.0;
  AutoNumber delta;  // auto: 1 / n^1.2
  double max_grad_norm = 1.0;
  PrivacyAccountant accountant = PrivacyAccountant::kPrv;
  PrivacySampling sampling = PrivacySampling::kPoisson;

  template <class V>
  void visit(V& v) {
    v.field("enabled", enabled,
            "Differentially private fine-tuning (DP-SGD): per-example clipping, Gaussian noise, "
            "Poisson sampling and a privacy accountant. Needs training.lora.enabled and "
            "data.packing: none.");
    v.field("target_epsilon", target_epsilon,
            "The privacy budget: with noise_multiplier 0 the noise is calibrated so that "
            "max_steps spend exactly this; with a given noise_multiplier, the preflight fails "
            "when max_steps would spend more (0: no limit).",
            {0, 1e4});
    v.field("noise_multiplier", noise_multiplier,
            "sigma: noise standard deviation / max_grad_norm (0: calibrate from target_epsilon).",
            {0, 1e4});
    v.field("delta", delta,
            "The delta of the (epsilon, delta) guarantee, in (0, 1); auto is 1 / n^1.2 with n "
            "the privacy units (examples, or groups when prepared with --group-by).");
    v.field("max_grad_norm", max_grad_norm,
            "C: each example's gradient (all trainable parameters) is clipped to this L2 norm.",
            open_closed(0, 1e6));
    v.field("accountant", accountant,
            "prv (Gopi et al. 2021, tight) or rdp (Renyi DP, Mironov et al. 2019, an upper "
            "bound).");
    v.field("sampling", sampling,
            "poisson: each unit joins a step with probability global_batch_size / n (what the "
            "accountants assume); shuffle: fixed-size batches of an epoch's permutation (the "
            "reported epsilon then assumes Poisson sampling: a warning).");
  }
};

struct PreflightConfig {
  bool enabled = true;
  double max_memory_fraction = 0.9;
  double host_memory_warn_fraction = 0.5;
  double host_memory_fail_fraction = 0.8;
  double first_batch_timeout_s = 60.0;
  std::int64_t synthetic_steps = 2;
  bool fail_on_warning = false;
  double verdict_timeout_s = 900.0;
  // The layout advice's links, scale_model.py's defaults (docs/performance.md).
  double intra_node_bandwidth_gbs = 450.0;  // NVLink 4, per GPU and direction
  double inter_node_bandwidth_gbps = 400.0;

  template <class V>
  void visit(V& v) {
    v.field("enabled", enabled, "Run the rank-0 preflight before training.");
    v.field("max_memory_fraction", max_memory_fraction,
            "Go only if predicted and measured peak memory stay below this fraction of what "
            "one rank can use.",
            open_closed(0, 1));
    v.field("host_memory_warn_fraction", host_memory_warn_fraction,
            "Warn when the dataloader needs more than this fraction of host memory.",
            open_closed(0, 1));
    v.field("host_memory_fail_fraction", host_memory_fail_fraction,
            "Fail when the dataloader needs more than this fraction of host memory.",
            open_closed(0, 1));
    v.field("first_batch_timeout_s", first_batch_timeout_s,
            "Deadline for every data access of the preflight, first batch included.",
            open_closed(0, kMaxTimeoutSeconds));
    v.field("synthetic_steps", synthetic_steps,
            "Optimizer steps of the measured synthetic step (at least 2: the peak of the second "
            "step is the one that counts).",
            {2, 100});
    v.field("fail_on_warning", fail_on_warning, "Treat preflight warnings as no-go.");
    v.field("verdict_timeout_s", verdict_timeout_s,
            "Other ranks give up waiting for rank 0's verdict after this many seconds.",
            open_closed(0, kMaxTimeoutSeconds));
    v.field("intra_node_bandwidth_gbs", intra_node_bandwidth_gbs,
            "Layout advice (layout.parallel): bus bandwidth of a collective within a node, GB/s "
            "per rank (nccl-tests busbw; the default is NVLink 4).",
            open_closed(0, 1e6));
    v.field("inter_node_bandwidth_gbps", inter_node_bandwidth_gbps,
            "Layout advice (layout.parallel): network bandwidth per rank between nodes, Gb/s.",
            open_closed(0, 1e6));
  }
};

struct CheckpointConfig {
  std::string dir;  // empty: <run.output_dir>/checkpoints
  std::int64_t interval_steps = 0;
  std::int64_t keep_last = 3;
  bool async = false;
  ResumeSetting resume;
  bool load_optimizer = true;
  bool fail_on_error = false;
  bool hdf5_file_locking = true;

  template <class V>
  void visit(V& v) {
    v.field("dir", dir, "Checkpoint directory; empty means <run.output_dir>/checkpoints.");
    v.field("interval_steps", interval_steps,
            "Save every N optimizer steps (0: only at the end of training).", {0, kMaxSteps});
    v.field("keep_last", keep_last,
            "Committed steps to keep (at least 1: the newest is always kept).", {1, 1'000'000});
    v.field("async", async, "Write checkpoints from a background thread.");
    v.field("resume", resume, "auto (latest when present), never, or a step directory.");
    v.field("load_optimizer", load_optimizer,
            "Restore optimizer state on resume (false: model weights only).");
    v.field("fail_on_error", fail_on_error,
            "Stop training (exit 5) when a periodic save fails. The final save and the save on "
            "a stop signal always end the run with exit 5 when they fail.");
    v.field("hdf5_file_locking", hdf5_file_locking,
            "Use HDF5 file locks on checkpoint files; set false on parallel file systems where "
            "flock fails (HDF5 reports 'unable to lock file').");
  }
};

struct LoggingConfig {
  std::int64_t interval_steps = 1;
  LogLevel level = LogLevel::kInfo;

  template <class V>
  void visit(V& v) {
    v.field("interval_steps", interval_steps, "Log and append to metrics.jsonl every N steps.",
            {1, kMaxSteps});
    v.field("level", level, "Log level.");
  }
};

/// nss_synthesize's stages around the training this file configures: the
/// table's preparation, the records sampled from the fine-tuned step and
/// their evaluation (docs/pipeline.md). nss_hpc does not read it.
struct PipelineConfig {
  std::int64_t records = 1000;
  double holdout = 0.05;
  std::int64_t max_holdout = 2000;
  std::int64_t holdout_seed = 0;
  PiiHandling pii = PiiHandling::kReplace;
  std::string pii_key;
  std::string prompt_template;
  std::string group_by;
  std::string order_by;
  std::int64_t max_new_tokens = 256;
  double temperature = 0.9;
  std::int64_t top_k = 0;
  double top_p = 1.0;
  std::int64_t batch_size = 8;
  RecordConstraint constrain = RecordConstraint::kSchema;
  double invalid_fraction_threshold = 0.8;
  std::int64_t patience = 1;
  bool evaluate = true;

  template <class V>
  void visit(V& v) {
    v.field("records", records, "Valid synthetic records to sample from the fine-tuned model.",
            {1, std::int64_t{1} << 40});
    v.field("holdout", holdout,
            "Rows held out of training for the evaluation: a fraction below 1, or a whole "
            "count; 0 holds none (no membership inference).",
            {0, 1e12});
    v.field("max_holdout", max_holdout, "At most this many holdout rows.",
            {0, std::int64_t{1} << 40});
    v.field("holdout_seed", holdout_seed, "Seed that chooses the holdout rows.",
            {0, std::numeric_limits<std::int64_t>::max()});
    v.field("pii", pii,
            "Personal data in the table: replace (surrogates), hash, redact, detect (report "
            "only) or off.");
    v.field("pii_key", pii_key,
            "Secret key file of replace and hash; empty: <run>/data/records.pii.key, created "
            "owner-only.");
    v.field("prompt_template", prompt_template,
            "Instruction before each record; empty: nss_prepare_data's default.");
    v.field("group_by", group_by, "One example per value of this column (empty: per row).");
    v.field("order_by", order_by, "Order of the rows inside a group (with group_by).");
    v.field("max_new_tokens", max_new_tokens, "Longest sampled record, in tokens.",
            {1, kMaxPositions});
    v.field("temperature", temperature, "Sampling temperature (0: greedy).", {0, 100});
    v.field("top_k", top_k, "Sample among the k likeliest tokens (0: no limit).",
            {0, kMaxPositions});
    v.field("top_p", top_p, "Nucleus sampling mass (1: no limit).", open_closed(0, 1));
    v.field("batch_size", batch_size, "Records decoded side by side per rank.", {1, 65536});
    v.field("constrain", constrain,
            "schema: every sampled token can continue a valid record; none: the model's choice.");
    v.field("invalid_fraction_threshold", invalid_fraction_threshold,
            "Stop early when the invalid share of a round stays above this.", {0, 1});
    v.field("patience", patience, "Rounds above the threshold before stopping early.",
            {1, 1'000'000});
    v.field("evaluate", evaluate,
            "Score the records against the training rows and the holdout (nss_evaluate).");
  }
};

struct Config {
  RunConfig run;
  ModelConfig model;
  DataConfig data;
  EvalConfig eval;
  TrainingConfig training;
  ParallelConfig parallel;
  PrivacyConfig privacy;
  PreflightConfig preflight;
  CheckpointConfig checkpoint;
  LoggingConfig logging;
  PipelineConfig pipeline;

  template <class V>
  void visit(V& v) {
    v.section("run", run, "Run identity and output location.");
    v.section("model", model, "Model shape (Hugging Face LlamaConfig names).");
    v.section("data", data, "Training data and dataloader.");
    v.section("eval", eval, "Validation on held-out data.");
    v.section("training", training, "Optimisation.");
    v.section("parallel", parallel, "Communication.");
    v.section("privacy", privacy, "Differentially private fine-tuning (docs/privacy.md).");
    v.section("preflight", preflight, "Rank-0 go/no-go checks before training.");
    v.section("checkpoint", checkpoint, "Sharded checkpoints and resume.");
    v.section("logging", logging, "Console, log files and metrics.");
    v.section("pipeline", pipeline,
              "nss_synthesize: table preparation, sampling and evaluation around the training.");
  }
};

}  // namespace nss::config
