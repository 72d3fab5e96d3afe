// nss_generate --model HF_DIR|STEP_DIR [--tokenizer PATH] (--prompt TEXT | --prompts FILE.jsonl)
//              [--max-new-tokens 256] [--temperature 0.9] [--top-k 0] [--top-p 1.0] [--seed 0]
//              [--num-samples 1] [--stop TEXT]... [--batch-size 8] [--output OUT.jsonl]
//
// Under mpirun every rank holds the whole model and generates a contiguous
// share of the prompts; rank 0 writes every rank's lines in rank order, so
// the output is the one a single process writes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "checkpoint/committed_step.h"
#include "comm/agreement.h"
#include "comm/mpi_app.h"
#include "comm/mpi_communicator.h"
#include "core/fs.h"
#include "data/input_file.h"
#include "eval/checkpoint_model.h"
#include "generate/generation.h"
#include "log/logger.h"
#include "tool_cli.h"

namespace {

const char* kUsage =
    "nss_generate --model HF_DIR|STEP_DIR [--tokenizer PATH] (--prompt TEXT | --prompts "
    "FILE.jsonl) [--max-new-tokens 256] [--temperature 0.9] [--top-k 0] [--top-p 1.0] [--seed 0] "
    "[--num-samples 1] [--stop TEXT]... [--batch-size 8] [--output OUT.jsonl]";

// The "prompt" of each line of a JSONL file (scripts/render_chat_prompts.py
// turns {"messages": ...} lines into such lines).
std::vector<std::string> read_prompts(const std::string& path) {
  std::vector<std::string> prompts;
  nss::data::for_each_jsonl_record(path, [&](const nlohmann::ordered_json& record,
                                             std::int64_t line) {
    if (!record.is_object() || !record.contains("prompt") || !record.at("prompt").is_string())
      throw nss::DataError(
          "generate", nss::data::where(path, line) + ": a prompt line needs a string \"prompt\"",
          "render chat conversations first with scripts/render_chat_prompts.py");
    prompts.push_back(record.at("prompt").get<std::string>());
  });
  if (prompts.empty()) throw nss::DataError("generate", path + " holds no prompt");
  return prompts;
}

}  // namespace

int main(int argc, char** argv) {
  return nss::comm::run_mpi_app(argc, argv, [&](int rank) {
    nss::log::init(rank);  // stderr: stdout carries only the samples
    const auto world = nss::comm::MpiCommunicator::create(MPI_COMM_WORLD);
    std::string model_path, tokenizer, prompt, prompts_path, output;
    nss::generate::GenerationRequest request;
    request.sampling = {0.9, 0, 1.0, 0};
    CLI::App cli{"nss_generate: write text with a model; one JSON object per prompt and sample"};
    cli.add_option("--model", model_path,
                   "Hugging Face model directory, or a checkpoint step directory")
        ->required();
    cli.add_option("--tokenizer", tokenizer,
                   "tokenizer.json, tokenizer.model or a directory holding one (default: the "
                   "model's)");
    auto* one = cli.add_option("--prompt", prompt, "One prompt");
    auto* many = cli.add_option("--prompts", prompts_path, "JSONL with a \"prompt\" per line");
    one->excludes(many);
    cli.add_option("--max-new-tokens", request.max_new_tokens, "Tokens to generate at most")
        ->capture_default_str();
    cli.add_option("--temperature", request.sampling.temperature, "0: greedy")
        ->capture_default_str();
    cli.add_option("--top-k", request.sampling.top_k, "0: no limit")->capture_default_str();
    cli.add_option("--top-p", request.sampling.top_p, "1: no limit")->capture_default_str();
    cli.add_option("--seed", request.sampling.seed, "Random seed")->capture_default_str();
    cli.add_option("--num-samples", request.num_samples, "Samples per prompt")
        ->capture_default_str();
    cli.add_option("--stop", request.stop, "Text that ends a sample (repeatable)");
    cli.add_option("--batch-size", request.batch_size, "Sequences decoded together")
        ->capture_default_str();
    cli.add_option("--output", output, "JSONL file to write (default: stdout)");
    // Every rank parses the same argv: a bad flag is the same error everywhere.
    bool help = false;
    nss::comm::run_on_all(*world, [&] {
      help = !nss::parse_tool_arguments(cli, argc, argv, "nss_generate", kUsage);
      if (!help && prompt.empty() == prompts_path.empty())
        throw nss::UsageError("cli", "give exactly one of --prompt and --prompts",
                              std::string("usage: ") + kUsage);
    });
    if (help) return nss::ExitCode::kOk;
    // Rank 0 reads the prompts once; every rank gets the same list.
    std::string listing;
    nss::comm::run_on_root(*world, 0, [&] {
      listing = nlohmann::json(prompts_path.empty() ? std::vector<std::string>{prompt}
                                                    : read_prompts(prompts_path))
                    .dump();
    });
    nss::comm::broadcast_text(*world, listing, 0);
    const auto prompts = nlohmann::json::parse(listing).get<std::vector<std::string>>();
    const auto count = static_cast<std::int64_t>(prompts.size());
    const std::int64_t first = count * rank / world->size();
    const std::int64_t last = count * (rank + 1) / world->size();
    request.prompts.assign(prompts.begin() + first, prompts.begin() + last);
    request.first_prompt_index = first;

    std::optional<nss::model::LlamaModel> model;
    std::unique_ptr<nss::generate::TextCodec> codec;
    nss::comm::run_on_all(*world, [&] {
      const bool step = nss::checkpoint::names_a_step(model_path);
      model.emplace(step ? nss::eval::load_checkpoint_model(model_path)
                         : nss::model::load_pretrained_model(model_path, {}, torch::kFloat32));
      const std::string model_dir = step ? model->config().from_pretrained : model_path;
      codec = nss::generate::open_text_codec(tokenizer, model_dir, model->config().vocab_size);
    });
    spdlog::info("[generate] {} prompts x {} samples on {} ranks with {}", count,
                 request.num_samples, world->size(), codec->description());

    std::int64_t generated = 0;
    const auto start = std::chrono::steady_clock::now();
    std::string lines;
    const bool alone = world->size() == 1 && output.empty();
    nss::comm::run_on_all(*world, [&] {
      nss::generate::generate(
          *model, *codec, request, [&](const nss::generate::GeneratedSample& s) {
            const std::string line =
                nlohmann::json{{"prompt_index", s.prompt_index},
                               {"sample", s.sample},
                               {"text", s.text},
                               {"tokens", s.tokens},
                               {"finish_reason", s.finish_reason}}
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                "\n";
            generated += static_cast<std::int64_t>(s.tokens.size());
            if (!alone) return void(lines += line);
            std::fputs(line.c_str(), stdout);  // one process: each sample as soon as it is written
            std::fflush(stdout);
          });
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spdlog::info(
        "[generate] rank {}: {} new tokens in {:.3f} s ({:.1f} tokens/s, prefill included)", rank,
        generated, seconds, generated / std::max(seconds, 1e-9));
    if (alone) return nss::ExitCode::kOk;
    const auto shares = nss::comm::all_gather_text(*world, lines);
    nss::comm::run_on_root(*world, 0, [&] {
      std::string all;
      for (const auto& share : shares) all += share;
      if (output.empty()) {
        std::fputs(all.c_str(), stdout);
        std::fflush(stdout);
      } else {
        nss::write_file_atomic(output, all);
      }
    });
    return nss::ExitCode::kOk;
  });
}
