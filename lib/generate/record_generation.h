// `nss_generate --records N`: the training prompt sampled in rounds until N
// valid records. In each round every rank contributes batch_size samples,
// decoded with continuous batching (sample_stream.h: a row that ends takes
// the next sample at once, running on into the next round's); sample
// numbers run across rounds and ranks ((round * ranks + rank) * batch_size +
// i), so each sample's tokens depend only on the seed and its number (the
// sampler's key), and rank 0 judges the samples in number order: the records
// written are those of one process, whatever the rank count or batch size.
// After each round the early stop (InvalidRecordStop) sees that round's
// counts, and the ranks agree on a stop signal (comm/stop_signal.h, when
// the caller installed its handlers): a stopped run returns what it has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/stop_signal.h"
#include "generate/record_collector.h"
#include "generate/text_codec.h"
#include "generate/token_constraint.h"
#include "generate/token_sampler.h"
#include "model/llama_model.h"

namespace nss::generate {

struct RecordsRequest {
  std::int64_t wanted = 0;  // valid records
  std::int64_t batch_size = 8;
  std::int64_t max_new_tokens = 256;
  SamplingSettings sampling;
  double invalid_fraction_threshold = 0.8;
  std::int64_t patience = 1;
  std::string constrain = "schema";  // --constrain: schema or none
  bool categories = false;           // --constrain-categories
  bool allow_uncovered = false;      // --allow-uncovered-categories
  // The constraint of each sample's tokens (--constrain schema); none: the
  // model's choice alone.
  TokenConstraint* constraint = nullptr;
};

struct RecordsOutcome {
  RecordCollector records;                              // complete on rank 0 only
  bool stopped_early = false;                           // by the invalid-record rule
  comm::StopRequest signal = comm::StopRequest::kNone;  // a signal ended it
  double seconds = 0;
};

/// Checks `request` (UsageError, exit 2): call it on every rank before the
/// model loads.
void check_records_request(const RecordsRequest& request);

/// UsageError when --constrain-categories would give a private step's
/// records values of its training table without --allow-uncovered-categories.
void check_categories_privacy(const RecordsRequest& request, bool private_step);

/// Collective over `world`: generates from `prompt` (token ids) until
/// `request.wanted` valid records or the early stop; logs progress lines on
/// rank 0 every 10 seconds.
RecordsOutcome generate_records(comm::Communicator& world, const model::LlamaModel& model,
                                const TextCodec& codec, const std::vector<std::int64_t>& prompt,
                                const RecordSchema& schema, const RecordsRequest& request);

}  // namespace nss::generate
