#include "preflight/token_data_checks.h"

#include <chrono>
#include <cstdio>

#include "core/deadline.h"
#include "core/units.h"
#include "data/data_loader.h"
#include "data/dataset_checks.h"
#include "data/token_dataset.h"

namespace nss::preflight {
namespace {

constexpr const char* kFirstBatchId = "data.first_batch";

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", seconds);
  return text;
}

std::string check_id(const DatasetRef& dataset, const char* what) {
  return (dataset.role == "train" ? std::string("data") : dataset.role) + "." + what;
}

}  // namespace

DatasetValidator token_dataset_validator(const config::Config& config) {
  const std::int64_t seq_len = config.data.seq_len;
  const std::int64_t vocab = config.model.vocab_size;
  const std::int64_t train_windows = config.training.global_batch_size;
  const std::int64_t eval_batches = config.eval.batches;
  const std::int64_t eval_windows = config.training.global_batch_size * eval_batches;
  const data::ModelTokenizer tokenizer = data::model_tokenizer(config.model.from_pretrained);
  return [=](const DatasetRef& dataset, const PathProbe&) -> std::vector<Check> {
    const std::string format_id = check_id(dataset, "format");
    const std::string vocabulary_id = check_id(dataset, "vocabulary");
    data::DatasetRequirements needs{seq_len, train_windows, vocab, tokenizer};
    if (dataset.role != "train") {
      needs.min_windows = eval_windows;
      needs.purpose =
          "validation (eval.batches = " + std::to_string(eval_batches) + " global batches)";
      needs.shorten_hint =
          "prepare a longer validation file, or lower eval.batches or training.global_batch_size";
    }
    std::shared_ptr<const data::TokenDataset> tokens;
    try {
      tokens = data::TokenDataset::open(dataset.path);
      data::check_dataset_length(*tokens, needs);
    } catch (const DataError& e) {
      return {
          Check::fail(format_id, ExitCode::kData, e.message(), e.hint()),
          Check::skipped(vocabulary_id, ExitCode::kData,
                         dataset.key + " is not a usable token dataset (see " + format_id + ")")};
    }
    const std::int64_t windows = data::num_windows(tokens->num_tokens(), seq_len);
    std::vector<Check> checks;
    checks.push_back(Check::pass(
        format_id, ExitCode::kData,
        dataset.key + " " + dataset.path + ": " + std::to_string(tokens->num_tokens()) + " " +
            dtype_name(tokens->dtype()) + " tokens in a contiguous /tokens, " +
            std::to_string(windows) + " windows of seq_len+1 = " + std::to_string(seq_len + 1) +
            " (" + std::to_string(needs.min_windows) + " needed)"));
    try {
      const data::MaxTokenId max_id = data::check_dataset_vocabulary(*tokens, needs);
      checks.push_back(Check::pass(
          vocabulary_id, ExitCode::kData,
          "largest token id " + std::to_string(max_id.value) +
              (max_id.from_attribute
                   ? " (max_token_id attribute)"
                   : " (sampled scan of " + std::to_string(max_id.scanned_tokens) + " tokens)") +
              " < model.vocab_size " + std::to_string(vocab) +
              (tokenizer.path.empty() ? "" : "; made with the model's " + tokenizer.path)));
    } catch (const DataError& e) {
      checks.push_back(Check::fail(vocabulary_id, ExitCode::kData, e.message(), e.hint()));
    }
    return checks;
  };
}

double fetch_first_batch(const config::Config& config, int world_size) {
  const auto start = std::chrono::steady_clock::now();
  const auto dataset = data::TokenDataset::open(config.data.path);
  data::DataLoaderOptions options;
  options.sampling = {config.data.seq_len,
                      config.training.global_batch_size,
                      config.training.micro_batch_size,
                      0,
                      world_size,
                      static_cast<std::uint64_t>(config.run.seed)};
  options.num_workers = config.data.num_workers;
  options.prefetch_factor = config.data.prefetch_factor;
  options.first_step = 1;
  data::DataLoader loader(dataset, options);
  const data::MicroBatch batch = loader.next();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Check check_first_batch(const PreflightContext& context, PreflightReport& report,
                        const FirstBatchFetch& fetch) {
  const auto& config = context.config;
  if (!report.usable("data.format"))
    return Check::skipped(kFirstBatchId, ExitCode::kData,
                          "data.path is not a usable token dataset (see data.open, data.format)");
  const double deadline = config.preflight.first_batch_timeout_s;
  // By value: after a timeout the fetch outlives this frame (and is abandoned).
  const auto seconds = call_with_deadline(
      deadline, [fetch, config, world = context.world_size] { return fetch(config, world); });
  const std::string what =
      "one micro-batch of " + std::to_string(config.training.micro_batch_size) + " x " +
      std::to_string(config.data.seq_len + 1) + " tokens from " + config.data.path +
      " through the dataloader (" + std::to_string(config.data.num_workers) + " workers)";
  if (!seconds) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", deadline);
    return Check::fail(
               kFirstBatchId, ExitCode::kData,
               what + " did not arrive within " + limit + " s (preflight.first_batch_timeout_s)",
               "check the file system holding data.path (a stuck mount, a file "
               "being migrated), or raise preflight.first_batch_timeout_s if it is only "
               "slow")
        .with_numbers(std::nullopt, std::nullopt, deadline, "s");
  }
  report.dataloader.first_batch_s = *seconds;
  return Check::pass(kFirstBatchId, ExitCode::kData, what + " in " + seconds_text(*seconds))
      .with_numbers(std::nullopt, *seconds, deadline, "s");
}

}  // namespace nss::preflight
