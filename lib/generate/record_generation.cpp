#include "generate/record_generation.h"

#include <chrono>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "core/error.h"
#include "generate/generation.h"
#include "generate/invalid_record_stop.h"
#include "generate/sample_stream.h"

namespace nss::generate {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void log_progress(const RecordCollector& records, std::int64_t wanted, double seconds) {
  const RecordCounts& t = records.totals();
  spdlog::info(
      "[records] {} of {} valid records; {:.1f}% of the {} judged are valid; {} samples; "
      "{:.2f} valid records/s",
      t.valid, wanted, 100.0 * records.valid_fraction(), t.valid + t.invalid, records.samples(),
      t.valid / std::max(seconds, 1e-9));
}

// Judges one round's samples (every rank's JSONL share, in rank order) in
// sample order; this round's counts.
RecordCounts judge_round(RecordCollector& records, const std::vector<std::string>& shares) {
  RecordCounts round;
  for (const std::string& share : shares) {
    std::istringstream lines(share);
    std::string line;
    while (!records.done() && std::getline(lines, line)) {
      const auto sample = nlohmann::json::parse(line);
      const RecordCounts c =
          records.add(sample.at("sample").get<std::int64_t>(), sample.at("text").get<std::string>(),
                      sample.at("finish_reason").get<std::string>());
      round.valid += c.valid;
      round.invalid += c.invalid;
    }
  }
  return round;
}

}  // namespace

void check_records_request(const RecordsRequest& request) {
  constexpr std::int64_t kMaxRecords = 1000000000;
  if (request.wanted < 1 || request.wanted > kMaxRecords)
    throw UsageError("generate", "--records must be in [1, " + std::to_string(kMaxRecords) +
                                     "], got " + std::to_string(request.wanted));
  InvalidRecordStop(request.invalid_fraction_threshold, request.patience);  // checks both
  if (request.constrain != "schema" && request.constrain != "none")
    throw UsageError("generate", "--constrain " + request.constrain + ": unknown",
                     "schema (every record valid; the default) or none (the model's choice alone)");
  if (request.categories && request.constrain != "schema")
    throw UsageError("generate", "--constrain-categories needs --constrain schema",
                     "drop --constrain none, or --constrain-categories");
  if (request.allow_uncovered && !request.categories)
    throw UsageError("generate", "--allow-uncovered-categories without --constrain-categories",
                     "give both, or neither");
}

void check_categories_privacy(const RecordsRequest& request, bool private_step) {
  if (request.categories && private_step && !request.allow_uncovered)
    throw UsageError("generate",
                     "--constrain-categories offers the values the private training table held "
                     "in its text columns: they are not covered by the run's DP guarantee",
                     "add --allow-uncovered-categories to accept that (generation.json records "
                     "it), or drop --constrain-categories");
}

RecordsOutcome generate_records(comm::Communicator& world, const model::LlamaModel& model,
                                const TextCodec& codec, const std::vector<std::int64_t>& prompt,
                                const RecordSchema& schema, const RecordsRequest& request) {
  check_records_request(request);
  RecordsOutcome outcome{RecordCollector(schema, request.wanted)};
  InvalidRecordStop stop(request.invalid_fraction_threshold, request.patience);
  GenerationRequest round;
  round.prompts = {prompt};
  round.batch_size = request.batch_size;
  round.max_new_tokens = request.max_new_tokens;
  round.sampling = request.sampling;
  round.constraint = request.constraint;
  // Job j of this rank is sample (round * ranks + rank) * batch + j % batch
  // of round j / batch; the rows run on into the next round's samples.
  const std::int64_t batch = request.batch_size;
  std::optional<SampleStream> stream;
  comm::run_on_all(world, [&] {
    stream.emplace(
        model, codec, round,
        [&](std::int64_t job) {
          return SampleJob{0, 0, (job / batch * world.size() + world.rank()) * batch + job % batch};
        },
        -1);
  });
  const auto start = Clock::now();
  auto last_progress = start;
  for (;;) {
    std::string share;
    comm::run_on_all(world, [&] {
      for (std::int64_t i = 0; i < batch; ++i) {
        const GeneratedSample s = stream->next();
        share +=
            nlohmann::json{
                {"sample", s.sample}, {"text", s.text}, {"finish_reason", s.finish_reason}}
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
            "\n";
      }
    });
    const auto shares = comm::all_gather_text(world, share);
    std::string verdict;
    comm::run_on_root(world, 0, [&] {
      const RecordCounts counts = judge_round(outcome.records, shares);
      const bool give_up = stop.after_batch(counts.valid, counts.invalid);
      verdict = outcome.records.done() ? "done" : give_up ? "stop" : "more";
      if (seconds_since(last_progress) >= 10 && verdict == "more") {
        last_progress = Clock::now();
        log_progress(outcome.records, request.wanted, seconds_since(start));
      }
    });
    comm::broadcast_text(world, verdict, 0);
    if (verdict == "more") outcome.signal = comm::agree_on_stop_request(world);
    if (verdict == "more" && outcome.signal == comm::StopRequest::kNone) continue;
    outcome.stopped_early = verdict == "stop";
    outcome.seconds = seconds_since(start);
    return outcome;
  }
}

}  // namespace nss::generate
