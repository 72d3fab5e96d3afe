// token_dataset_probe PATH [SEQ_LEN MIN_WINDOWS MODEL_VOCAB]: opens a token
// dataset with the C++ reader (and checks it against a job's needs when given)
// and prints one JSON line describing it; exit codes as the real tools.
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/app_main.h"
#include "data/dataset_checks.h"
#include "data/token_dataset.h"

int main(int argc, char** argv) {
  return nss::run_app("token_dataset_probe", [&] {
    if (argc != 2 && argc != 5)
      throw nss::UsageError("probe", "usage: token_dataset_probe PATH [SEQ_LEN MIN_WINDOWS VOCAB]");
    const auto dataset = nss::data::TokenDataset::open(argv[1]);
    if (argc == 5)
      nss::data::check_dataset(*dataset,
                               {std::stoll(argv[2]), std::stoll(argv[3]), std::stoll(argv[4])});
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(dataset->num_tokens()));
    dataset->read(0, dataset->num_tokens(), tokens.data());
    const auto& m = dataset->metadata();
    const auto optional = [](const std::optional<std::int64_t>& v) {
      return v ? nlohmann::json(*v) : nlohmann::json();
    };
    std::vector<std::uint8_t> loss_mask(tokens.size());
    dataset->read_loss_mask(0, dataset->num_tokens(), loss_mask.data());
    std::vector<std::int64_t> offsets;
    for (std::int64_t d = 0; dataset->has_document_offsets() && d <= dataset->num_documents(); ++d)
      offsets.push_back(dataset->document_offset(d));
    const auto& p = m.preparation;
    const nlohmann::json out = {{"dtype", nss::dtype_name(dataset->dtype())},
                                {"has_loss_mask", dataset->has_loss_mask()},
                                {"loss_mask", loss_mask},
                                {"document_offsets", offsets},
                                {"format", p.format},
                                {"prompt_template", p.prompt_template},
                                {"group_by", p.group_by},
                                {"order_by", p.order_by},
                                {"records_schema", p.records_schema},
                                {"dropped_examples", optional(m.dropped_examples)},
                                {"num_tokens", dataset->num_tokens()},
                                {"tokenizer", m.tokenizer},
                                {"vocab_size", optional(m.vocab_size)},
                                {"max_token_id", optional(m.max_token_id)},
                                {"documents", optional(m.documents)},
                                {"bos_token_id", optional(m.bos_token_id)},
                                {"eos_token_id", optional(m.eos_token_id)},
                                {"tokens", tokens}};
    std::puts(out.dump().c_str());
    return nss::ExitCode::kOk;
  });
}
