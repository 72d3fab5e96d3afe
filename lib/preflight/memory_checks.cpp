#include "preflight/memory_checks.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "config/derived.h"
#include "core/units.h"
#include "data/loader_memory.h"
#include "layout/sharded_state_layout.h"
#include "model/unit_layouts.h"
#include "preflight/memory_model.h"
#include "preflight/pinned_memory.h"

namespace nss::preflight {
namespace {

constexpr const char* kModelId = "memory.model";
constexpr const char* kBudgetId = "memory.budget";
constexpr const char* kPinnedId = "memory.pinned_host";

MemoryCapacity cpu_capacity(const PreflightContext& context) {
  MemoryCapacity out;
  for (const auto& node : group_by_node(context.ranks)) {
    const RankFacts* tightest = nullptr;
    for (const RankFacts* r : node.ranks) {
      if (!r->memory.usable_bytes)
        return {std::nullopt, "usable host memory is unknown on " + rank_label(*r)};
      if (!tightest || *r->memory.usable_bytes < *tightest->memory.usable_bytes) tightest = r;
    }
    const std::uint64_t per_rank = *tightest->memory.usable_bytes / node.ranks.size();
    if (!out.bytes || per_rank < *out.bytes) {
      out.bytes = per_rank;
      out.description = "host " + node.host + ": " + format_bytes(*tightest->memory.usable_bytes) +
                        " usable (bound by " + tightest->memory.bound_by + ") / " +
                        std::to_string(node.ranks.size()) + " ranks";
    }
  }
  return out;
}

MemoryCapacity gpu_capacity(const PreflightContext& context) {
  MemoryCapacity out;
  for (const auto& facts : context.ranks) {
    const GpuDevice* device = rank_device(facts);
    if (!device || !device->free_bytes)
      return {std::nullopt, "the free memory of " + rank_label(facts) + "'s GPU is unknown"};
    std::uint64_t sharing = 0;
    for (const auto& other : context.ranks) {
      const GpuDevice* theirs = rank_device(other);
      if (other.host == facts.host && theirs && theirs->pci_bus_id == device->pci_bus_id) ++sharing;
    }
    const std::uint64_t per_rank = *device->free_bytes / std::max<std::uint64_t>(1, sharing);
    if (!out.bytes || per_rank < *out.bytes) {
      out.bytes = per_rank;
      out.description = rank_label(facts) + " GPU " + std::to_string(device->index) + ": " +
                        format_bytes(*device->free_bytes) + " free at start / " +
                        std::to_string(sharing) + " ranks sharing it";
    }
  }
  return out;
}

// Peak tensor bytes as a line in the micro-batch size, through the measurements.
struct Line {
  double intercept = 0, slope = 0;
  double at(std::int64_t micro) const { return intercept + slope * static_cast<double>(micro); }
};

std::optional<Line> fit_line(const std::vector<MemoryMeasurement>& measurements) {
  std::map<std::int64_t, double> points;  // one point per size
  for (const auto& m : measurements)
    if (m.tensor_peak_bytes) points[m.micro_batch_size] = static_cast<double>(*m.tensor_peak_bytes);
  if (points.size() < 2) return std::nullopt;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : points) {
    sx += double(x);
    sy += y;
    sxx += double(x) * double(x);
    sxy += double(x) * y;
  }
  const double n = double(points.size());
  Line line;
  line.slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  line.intercept = (sy - line.slope * sx) / n;
  return line;
}

const MemoryMeasurement* measurement_at(const MemorySummary& memory, std::int64_t micro) {
  for (const auto& m : memory.measurements)
    if (m.micro_batch_size == micro) return &m;
  return nullptr;
}

MemoryEstimate estimate(const PreflightContext& context, const MemorySummary& memory,
                        const std::optional<Line>& line, std::int64_t micro) {
  MemoryEstimate e;
  e.predicted = predicted_total_bytes(context, micro);
  const std::uint64_t extras = extras_bytes(memory_extras(context, micro));
  if (const MemoryMeasurement* m = measurement_at(memory, micro)) {
    if (m->tensor_peak_bytes)
      e.measured = *m->tensor_peak_bytes + extras;
    else
      e.out_of_memory = true;
  } else if (line) {
    e.measured = static_cast<std::uint64_t>(std::max(0.0, line->at(micro))) + extras;
    e.from_line = true;
  }
  return e;
}

// Where the synthetic step ran, its measurement decides: it is the job's own
// step on the job's device and libraries. Elsewhere (read off the line, or
// not measured) both must fit.
bool fits(const MemoryEstimate& e, std::uint64_t budget) {
  if (e.out_of_memory) return false;
  if (e.measured && !e.from_line) return *e.measured <= budget;
  return e.predicted <= budget && (!e.measured || *e.measured <= budget);
}

std::string estimate_text(const MemoryEstimate& e) {
  std::string text = "predicted " + format_bytes(e.predicted) + " per rank";
  if (e.out_of_memory) return text + ", the synthetic step ran out of memory";
  if (e.measured)
    text += (e.from_line ? ", measured line " : ", measured ") + format_bytes(*e.measured);
  return text;
}

}  // namespace

MemoryCapacity memory_capacity(const PreflightContext& context) {
  return context.device == DeviceKind::kCpu ? cpu_capacity(context) : gpu_capacity(context);
}

std::optional<std::uint64_t> memory_budget(const PreflightContext& context) {
  const MemoryCapacity capacity = memory_capacity(context);
  if (!capacity.bytes) return std::nullopt;
  return static_cast<std::uint64_t>(context.config.preflight.max_memory_fraction *
                                    static_cast<double>(*capacity.bytes));
}

std::vector<MemoryComponent> memory_extras(const PreflightContext& context,
                                           std::int64_t micro_batch_size) {
  const auto& config = context.config;
  std::vector<MemoryComponent> extras;
  if (context.device == DeviceKind::kCuda) {
    extras.push_back({"fixed_overhead", kCudaContextBytes});
    extras.push_back({"cublas_workspace", kCublasWorkspaceBytes});
    return extras;  // the queue and the staging buffers are host memory there
  }
  extras.push_back({"fixed_overhead", context.baseline_resident_bytes});
  extras.push_back({"dataloader_queue",
                    static_cast<std::uint64_t>(data::loader_host_memory_bytes(
                        config.data.num_workers, config.data.prefetch_factor, micro_batch_size,
                        config.data.seq_len, config.data.packing != config::Packing::kWindows))});
  std::uint64_t staging = 0;
  if (config.checkpoint.async) {  // a snapshot of what this rank writes: 1/R of its shard
    const int replicas =
        context.world_size / config::shard_group_ranks(config.parallel, context.world_size);
    staging = static_cast<std::uint64_t>(
        layout::ShardedStateLayout(model::unit_layouts(config, context.world_size), 0)
            .saved_bytes() /
        replicas);
  }
  extras.push_back({"async_checkpoint_staging", staging});
  return extras;
}

std::uint64_t extras_bytes(const std::vector<MemoryComponent>& extras) {
  std::uint64_t total = 0;
  for (const auto& e : extras) total += e.bytes;
  return total;
}

std::uint64_t predicted_total_bytes(const PreflightContext& context,
                                    std::int64_t micro_batch_size) {
  return predict_step_memory(context.config, context.world_size, context.device, micro_batch_size,
                             context.packed_row_spans)
             .peak_bytes +
         extras_bytes(memory_extras(context, micro_batch_size));
}

// ", frozen base 0.52 bytes per parameter (projections in NF4 with double quantisation)".
std::string base_text(const config::Config& config, const StepMemory& step) {
  if (!step.base_bytes_per_parameter) return "";
  const auto& lora = config.training.lora;
  char figure[32];
  std::snprintf(figure, sizeof figure, "%.3g", *step.base_bytes_per_parameter);
  std::string text = std::string(", frozen base ") + figure + " bytes per parameter";
  if (lora.quantize_base == config::QuantizeBase::kNf4)
    text += lora.double_quant ? " (projections in NF4 with double quantisation)"
                              : " (projections in NF4)";
  return text;
}

Check check_memory_model(const PreflightContext& context, PreflightReport& report) {
  const auto& config = context.config;
  const std::int64_t micro = config.training.micro_batch_size;
  const StepMemory step = predict_step_memory(config, context.world_size, context.device, micro,
                                              context.packed_row_spans);
  const auto extras = memory_extras(context, micro);
  const MemoryCapacity capacity = memory_capacity(context);

  auto& memory = report.memory;
  memory.device = device_name(context.device);
  memory.capacity_bytes = capacity.bytes;
  memory.budget_bytes = memory_budget(context);
  memory.components = step.components;
  memory.components.insert(memory.components.end(), extras.begin(), extras.end());
  memory.predicted_peak_bytes = step.peak_bytes + extras_bytes(extras);
  memory.peak_phase = step.peak_phase;
  memory.base_bytes_per_parameter = step.base_bytes_per_parameter;
  memory.fixed_overhead_bytes = extras.front().bytes;

  std::string extra_text;
  for (const auto& e : extras)
    if (e.bytes > 0) extra_text += " + " + format_bytes(e.bytes) + " " + e.name;
  std::string message = "predicted peak " + format_bytes(*memory.predicted_peak_bytes) +
                        " per rank = " + format_bytes(step.peak_bytes) + " of tensors in the " +
                        step.peak_phase + extra_text + " (model state " +
                        format_bytes(step.state_bytes) + base_text(config, step) + ")";
  if (memory.budget_bytes)
    message += "; budget " + format_bytes(*memory.budget_bytes) + " = " +
               format_percent(config.preflight.max_memory_fraction, 0) + " of " +
               capacity.description;
  else
    message += "; " + capacity.description;
  return Check::pass(kModelId, ExitCode::kResources, message)
      .with_numbers(
          double(*memory.predicted_peak_bytes), std::nullopt,
          memory.budget_bytes ? std::optional<double>(double(*memory.budget_bytes)) : std::nullopt,
          "bytes");
}

std::optional<BudgetDecision> decide_budget(const PreflightContext& context,
                                            const MemorySummary& memory) {
  const std::optional<std::uint64_t> budget = memory_budget(context);
  if (!budget) return std::nullopt;
  const auto& config = context.config;
  const std::optional<Line> line = fit_line(memory.measurements);
  BudgetDecision decision;
  decision.budget = *budget;
  decision.configured = estimate(context, memory, line, config.training.micro_batch_size);
  decision.fits = fits(decision.configured, *budget);
  for (const std::int64_t m : config::micro_batch_choices(config, context.world_size)) {
    const MemoryEstimate e = estimate(context, memory, line, m);
    if (fits(e, *budget)) {
      decision.max_micro_batch_size = m;
      decision.at_max = e;
    }
  }
  decision.at_one = estimate(context, memory, line, 1);
  return decision;
}

// A LoRA job whose 16-bit base does not fit, predicted with the base's
// projections in NF4 (double quantisation): "set ... (QLoRA: ...), or " when
// that fits the budget at the configured micro-batch, else "".
std::string nf4_remediation(const PreflightContext& context, std::uint64_t budget) {
  const auto& lora = context.config.training.lora;
  if (!lora.enabled || lora.quantize_base != config::QuantizeBase::kNone) return "";
  config::Config nf4 = context.config;
  nf4.training.lora.quantize_base = config::QuantizeBase::kNf4;
  nf4.training.lora.double_quant = true;
  const PreflightContext quantized = with_config(context, nf4);
  const std::int64_t micro = nf4.training.micro_batch_size;
  const StepMemory as_is = predict_step_memory(context.config, context.world_size, context.device,
                                               micro, context.packed_row_spans);
  const StepMemory step =
      predict_step_memory(nf4, context.world_size, context.device, micro, context.packed_row_spans);
  const std::uint64_t predicted = predicted_total_bytes(quantized, micro);
  if (predicted > budget || !as_is.base_bytes_per_parameter || !step.base_bytes_per_parameter)
    return "";
  char figures[96];
  std::snprintf(figures, sizeof figures, "%.3g instead of %.3g bytes per base parameter",
                *step.base_bytes_per_parameter, *as_is.base_bytes_per_parameter);
  return "set training.lora.quantize_base: nf4 and training.lora.double_quant: true (QLoRA: "
         "predicted " +
         format_bytes(predicted) + " per rank, " + figures + "), or ";
}

// A GPU job that fits only with the fp32 masters and moments in host memory:
// "set parallel.offload_optimizer: true (...), or " when that fits the budget
// at the configured micro-batch, else "".
std::string offload_remediation(const PreflightContext& context, std::uint64_t budget) {
  if (context.config.parallel.offload_optimizer) return "";
  config::Config offloaded = context.config;
  offloaded.parallel.offload_optimizer = true;
  const PreflightContext with_offload = with_config(context, offloaded);
  if (!with_offload.run_plan().offload_optimizer) return "";
  const std::int64_t micro = offloaded.training.micro_batch_size;
  const std::uint64_t predicted = predicted_total_bytes(with_offload, micro);
  if (predicted > budget) return "";
  const StepMemory step =
      predict_step_memory(offloaded, with_offload.run_plan(), micro, context.packed_row_spans);
  return "set parallel.offload_optimizer: true (fp32 masters and AdamW moments in pinned host "
         "memory, " +
         format_bytes(step.pinned_host_bytes) + " per rank; predicted " + format_bytes(predicted) +
         " per rank on the GPU; verify it on your GPU first with offloaded_adamw_test from a "
         "CUDA build, docs/gpu.md), or ";
}

std::string budget_remediation(const PreflightContext& context, const BudgetDecision& decision) {
  const auto& config = context.config;
  const int group = config::shard_group_ranks(config.parallel, context.world_size);
  // Under hybrid sharding the state is divided by the shard group, not the world.
  const std::string divide =
      group < context.world_size
          ? "raise parallel.shard_group_size (the model and optimizer state are divided by it, "
            "now " +
                std::to_string(group) + ")"
          : "run more ranks (the model and optimizer state are divided by the world size)";
  const std::string more = nf4_remediation(context, decision.budget) +
                           offload_remediation(context, decision.budget) +
                           "give each rank more memory (Slurm --mem, fewer ranks per node), " +
                           divide + ", or shorten data.seq_len";
  if (!decision.max_micro_batch_size)
    return "even training.micro_batch_size=1 does not fit (" + estimate_text(decision.at_one) +
           "): " + more;
  const std::int64_t max_micro = *decision.max_micro_batch_size;
  return "set training.micro_batch_size=" + std::to_string(max_micro) + " (" +
         estimate_text(decision.at_max) + "; " +
         std::to_string(config::accumulation_steps(config, context.world_size, max_micro)) +
         " accumulation steps keep global_batch_size " +
         std::to_string(config.training.global_batch_size) + "), or " + more;
}

Check check_memory_budget(const PreflightContext& context, PreflightReport& report) {
  const auto& config = context.config;
  auto& memory = report.memory;
  if (!memory.predicted_peak_bytes)
    return Check::skipped(kBudgetId, ExitCode::kResources,
                          "the memory model did not run (see memory.model)");
  const std::optional<BudgetDecision> decision = decide_budget(context, memory);
  if (!decision)
    return Check::skipped(kBudgetId, ExitCode::kResources,
                          memory_capacity(context).description +
                              ": no budget to compare the predicted " +
                              format_bytes(*memory.predicted_peak_bytes) + " with");
  memory.max_micro_batch_size = decision->max_micro_batch_size;
  const std::int64_t micro = config.training.micro_batch_size;
  const std::string limit = format_bytes(decision->budget) + " = " +
                            format_percent(config.preflight.max_memory_fraction, 0) + " of " +
                            memory_capacity(context).description;
  const std::string largest = decision->max_micro_batch_size
                                  ? "the largest micro-batch that fits is " +
                                        std::to_string(*decision->max_micro_batch_size)
                                  : "no micro-batch size fits";
  std::optional<double> measured;
  if (memory.measured_peak_bytes) measured = double(*memory.measured_peak_bytes);
  const double predicted = double(decision->configured.predicted);
  if (decision->fits)
    return Check::pass(kBudgetId, ExitCode::kResources,
                       "micro_batch_size " + std::to_string(micro) + ": " +
                           estimate_text(decision->configured) + ", within the budget " + limit +
                           "; " + largest)
        .with_numbers(predicted, measured, double(decision->budget), "bytes");
  return Check::fail(kBudgetId, ExitCode::kResources,
                     "micro_batch_size " + std::to_string(micro) +
                         " does not fit: " + estimate_text(decision->configured) +
                         ", above the budget " + limit + "; " + largest,
                     budget_remediation(context, *decision))
      .with_numbers(predicted, measured, double(decision->budget), "bytes");
}

std::optional<Check> check_pinned_host_memory(const PreflightContext& context) {
  const auto& config = context.config;
  if (!context.run_plan().offload_optimizer) return std::nullopt;
  PinnedMemoryInput input;
  input.shard_elements = static_cast<std::uint64_t>(
      layout::ShardedStateLayout(model::unit_layouts(config, context.world_size), 0)
          .bytes(layout::StateTensor::kMaster) /
      4);
  input.warn_fraction = config.preflight.host_memory_warn_fraction;
  input.fail_fraction = config.preflight.host_memory_fail_fraction;
  // The tightest node: most ranks, least usable memory, smallest locked-memory limit.
  PinnedMemoryVerdict worst;
  std::string where;
  for (const auto& node : group_by_node(context.ranks)) {
    input.ranks_on_node = static_cast<int>(node.ranks.size());
    const RankFacts* tightest = node.ranks.front();
    input.memlock = tightest->memlock;
    for (const RankFacts* r : node.ranks) {
      if (!r->memory.usable_bytes || (tightest->memory.usable_bytes &&
                                      *r->memory.usable_bytes < *tightest->memory.usable_bytes))
        tightest = r;
      if (r->memlock.soft && (!input.memlock.soft || *r->memlock.soft < *input.memlock.soft))
        input.memlock = r->memlock;
    }
    input.node = tightest->memory;
    const PinnedMemoryVerdict verdict = check_pinned_memory(input);
    if (where.empty() || static_cast<int>(verdict.status) > static_cast<int>(worst.status)) {
      worst = verdict;
      where = "host " + node.host;
    }
  }
  const std::string finding = where + ": " + worst.finding;
  const double pinned = double(worst.pinned_bytes_on_node);
  switch (worst.status) {
    case CheckStatus::kFail:
      return Check::fail(kPinnedId, ExitCode::kResources, finding, worst.fix)
          .with_numbers(pinned, std::nullopt, std::nullopt, "bytes");
    case CheckStatus::kWarn:
      return Check::warn(kPinnedId, ExitCode::kResources, finding, worst.fix)
          .with_numbers(pinned, std::nullopt, std::nullopt, "bytes");
    default:
      return Check::pass(kPinnedId, ExitCode::kResources, finding)
          .with_numbers(pinned, std::nullopt, std::nullopt, "bytes");
  }
}

}  // namespace nss::preflight
