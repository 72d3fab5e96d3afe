#include "preflight/token_data_checks.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "config/derived.h"
#include "core/deadline.h"
#include "core/units.h"
#include "data/data_loader.h"
#include "data/dataset_checks.h"
#include "data/packed_source.h"
#include "data/sequential_reader.h"
#include "data/token_dataset.h"
#include "preflight/holdout_check.h"
#include "preflight/pii_check.h"

namespace nss::preflight {
namespace {

constexpr const char* kFirstBatchId = "data.first_batch";

std::string check_id(const DatasetRef& dataset, const char* what) {
  return (dataset.role == "train" ? std::string("data") : dataset.role) + "." + what;
}

// A file with /loss_mask must leave something to learn: the training file
// any target at all, the held-out batches validation scores some.
Check targets_check(const std::string& id, const DatasetRef& dataset,
                    std::shared_ptr<const data::TokenDataset> tokens, const config::Config& config,
                    const data::DatasetRequirements& needs) {
  const std::int64_t eval_batches = config.eval.batches;
  std::int64_t targets = 0, labels = 0;
  std::string kept;
  if (dataset.role == "train" && config.data.packing != config::Packing::kWindows) {
    // What packing keeps: truncation may cut every answer off.
    const data::KeptLabels counted = data::check_targets_kept(*tokens, needs);
    targets = counted.targets;
    labels = counted.labels;
    kept = " kept by packing";
  } else if (dataset.role == "train") {
    constexpr std::int64_t kBlock = std::int64_t{1} << 20;
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(kBlock));
    for (std::int64_t first = 1; first < tokens->num_tokens(); first += kBlock) {
      const std::int64_t count = std::min(kBlock, tokens->num_tokens() - first);
      tokens->read_loss_mask(first, count, mask.data());
      for (std::int64_t i = 0; i < count; ++i) targets += mask[static_cast<std::size_t>(i)];
      labels += count;
    }
  } else {
    const data::SequentialBatchReader reader(tokens, config.data.seq_len,
                                             config.training.global_batch_size, eval_batches, 0, 1,
                                             config.data.packing, config.data.long_documents);
    for (std::int64_t k = 0; k < reader.num_batches(); ++k) {
      const data::TokenBatch batch = reader.batch(k);
      targets += batch.target_tokens();
      labels += batch.rows * batch.seq_len;
    }
  }
  const std::string where = dataset.role == "train" ? dataset.key + " " + dataset.path
                                                    : "the " + std::to_string(eval_batches) +
                                                          " held-out batches of " + dataset.path;
  const std::string text =
      where + ": " + std::to_string(targets) + " of " + std::to_string(labels) + " labels" + kept +
      " are targets (" + format_percent(labels > 0 ? static_cast<double>(targets) / labels : 0.0) +
      ", /loss_mask)";
  if (targets == 0)
    return Check::fail(id, ExitCode::kData, text + ": nothing to learn or score",
                       "prepare the data with answers (docs/data.md, Instruction and record data)");
  return Check::pass(id, ExitCode::kData, text);
}

// What packing makes of the file: rows against the need, documents cut, padding.
Check packing_check(const std::string& id, const data::TokenDataset& tokens,
                    const config::Config& config, const data::DatasetRequirements& needs) {
  const std::int64_t needed = needs.min_samples;
  const data::PackedSource source(
      std::shared_ptr<const data::TokenDataset>(&tokens, [](const data::TokenDataset*) {}),
      {needs.seq_len, needs.packing, needs.long_documents, needs.shuffle, needs.seed});
  const data::PackingStats stats = source.stats();
  std::string text = std::to_string(stats.documents) + " documents";
  if (stats.split_documents > 0)
    text += " (" + std::to_string(stats.split_documents) + " split into pieces)";
  // A Poisson batch's expected size is checked against the examples by privacy.budget.
  const std::string need = config::poisson_batches(config)
                               ? "Poisson batches: privacy.budget checks their expected size"
                               : std::to_string(needed) + " needed";
  text += " pack into " + std::to_string(stats.rows) +
          " rows of seq_len+1 = " + std::to_string(needs.seq_len + 1) + " (data.packing " +
          config::choice_name(needs.packing) + ", " + need + "); padding " +
          format_percent(stats.padding_share) + " of the row tokens";
  if (stats.truncated_documents > 0)
    text += "; " + std::to_string(stats.truncated_documents) + " documents longer than a row " +
            "lose " + std::to_string(stats.truncated_tokens) + " tokens to truncation";
  if (stats.rows < needed) {
    try {
      data::check_dataset_length(tokens, needs);
    } catch (const DataError& e) {
      return Check::fail(id, ExitCode::kData, text + ": fewer rows than needed", e.hint());
    }
  }
  if (stats.truncated_documents > 0)
    return Check::warn(id, ExitCode::kData, text,
                       "raise data.seq_len, or set data.long_documents: split to train on every "
                       "token");
  return Check::pass(id, ExitCode::kData, text);
}

// A records table's: the holdout nss_evaluate will use, and its personal data.
void append_records_checks(const DatasetRef& dataset, const data::TokenDataset& tokens,
                           std::vector<Check>& checks) {
  try {
    checks.push_back(holdout_check(dataset.key, tokens));
  } catch (const DataError& e) {
    checks.push_back(Check::fail("data.holdout", ExitCode::kData, e.message(), e.hint()));
  }
  checks.push_back(pii_check(dataset.key, tokens));
}

}  // namespace

DatasetValidator token_dataset_validator(const config::Config& config) {
  const std::int64_t seq_len = config.data.seq_len;
  const std::int64_t vocab = config.model.vocab_size;
  const data::ModelTokenizer tokenizer = data::model_tokenizer(config.model.from_pretrained);
  const auto shared_config = std::make_shared<const config::Config>(config);
  return [=](const DatasetRef& dataset, const PathProbe&) -> std::vector<Check> {
    const config::Config& config = *shared_config;
    const std::string format_id = check_id(dataset, "format");
    const std::string vocabulary_id = check_id(dataset, "vocabulary");
    const bool windows = config.data.packing == config::Packing::kWindows;
    const data::DatasetRequirements needs = dataset.role == "train"
                                                ? data::training_requirements(config, tokenizer)
                                                : data::validation_requirements(config, tokenizer);
    std::shared_ptr<const data::TokenDataset> tokens;
    try {
      tokens = data::TokenDataset::open(dataset.path);
      // Packed rows are counted, against the same need, by the packing check.
      if (windows) data::check_dataset_length(*tokens, needs);
    } catch (const DataError& e) {
      return {
          Check::fail(format_id, ExitCode::kData, e.message(), e.hint()),
          Check::skipped(vocabulary_id, ExitCode::kData,
                         dataset.key + " is not a usable token dataset (see " + format_id + ")")};
    }
    std::string samples =
        windows ? std::to_string(data::num_windows(tokens->num_tokens(), seq_len)) +
                      " windows of seq_len+1 = " + std::to_string(seq_len + 1) + " (" +
                      std::to_string(needs.min_samples) + " needed)"
                : std::to_string(tokens->num_documents()) + " documents (their rows: see " +
                      check_id(dataset, "packing") + ")";
    std::vector<Check> checks;
    checks.push_back(Check::pass(
        format_id, ExitCode::kData,
        dataset.key + " " + dataset.path + ": " + std::to_string(tokens->num_tokens()) + " " +
            dtype_name(tokens->dtype()) + " tokens in a contiguous /tokens, " + samples));
    if (!windows) {
      try {
        checks.push_back(packing_check(check_id(dataset, "packing"), *tokens, config, needs));
      } catch (const DataError& e) {
        checks.push_back(
            Check::fail(check_id(dataset, "packing"), ExitCode::kData, e.message(), e.hint()));
      }
    }
    if (tokens->has_loss_mask()) {
      try {
        checks.push_back(
            targets_check(check_id(dataset, "targets"), dataset, tokens, config, needs));
      } catch (const DataError& e) {
        checks.push_back(
            Check::fail(check_id(dataset, "targets"), ExitCode::kData, e.message(), e.hint()));
      }
    }
    if (dataset.role == "train" && tokens->metadata().preparation.format == "records")
      append_records_checks(dataset, *tokens, checks);
    try {
      const data::TokenIdRange ids = data::check_dataset_vocabulary(*tokens, needs);
      // Signed ids were scanned for negatives too (no attribute bounds them below).
      const bool signed_ids = tokens->dtype() == DType::kInt32 || tokens->dtype() == DType::kInt64;
      checks.push_back(Check::pass(
          vocabulary_id, ExitCode::kData,
          "largest token id " + std::to_string(ids.max) +
              (ids.max_from_attribute
                   ? " (max_token_id attribute)"
                   : " (sampled scan of " + std::to_string(ids.scanned_tokens) + " tokens)") +
              " < model.vocab_size " + std::to_string(vocab) +
              (signed_ids ? ", smallest " + std::to_string(ids.min) + " (sampled scan of " +
                                std::to_string(ids.scanned_tokens) + " tokens)"
                          : "") +
              (tokenizer.path.empty() ? "" : "; made with the model's " + tokenizer.path)));
    } catch (const DataError& e) {
      checks.push_back(Check::fail(vocabulary_id, ExitCode::kData, e.message(), e.hint()));
    }
    return checks;
  };
}

std::vector<std::int64_t> packed_row_spans(const config::Config& config) {
  if (config.data.packing == config::Packing::kWindows) return {};
  const auto spans = call_with_deadline(config.preflight.first_batch_timeout_s, [config] {
    try {
      const data::PackedSource source(
          data::TokenDataset::open(config.data.path),
          {config.data.seq_len, config.data.packing, config.data.long_documents, true,
           static_cast<std::uint64_t>(config.run.seed)});
      return source.costliest_row_spans();
    } catch (const Error&) {
      return std::vector<std::int64_t>();
    }
  });
  return spans.value_or(std::vector<std::int64_t>());
}

double fetch_first_batch(const config::Config& config, int world_size) {
  const auto start = std::chrono::steady_clock::now();
  const auto dataset = data::TokenDataset::open(config.data.path);
  dataset->limit_token_ids(config.model.vocab_size);  // as the trainer's checks do
  // A Poisson batch's size varies, and drawing it needs the run's secret key,
  // which the preflight never has: a fixed batch of one micro-batch per rank
  // reads its micro-batch the same way. The ranks of a tensor group read the
  // same batches, as the trainer's loader does.
  const int readers = config::data_parallel_ranks(config, world_size);
  const std::int64_t global_batch =
      config::poisson_batches(config)
          ? config.training.micro_batch_size * static_cast<std::int64_t>(readers)
          : config.training.global_batch_size;
  data::DataLoaderOptions options;
  options.sampling = {config.data.seq_len,
                      global_batch,
                      config.training.micro_batch_size,
                      0,
                      readers,
                      static_cast<std::uint64_t>(config.run.seed)};
  options.packing = config.data.packing;
  options.long_documents = config.data.long_documents;
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
  return Check::pass(kFirstBatchId, ExitCode::kData, what + " in " + format_seconds(*seconds))
      .with_numbers(std::nullopt, *seconds, deadline, "s");
}

}  // namespace nss::preflight
