// nss_prepare_data --input PATH [--input PATH]... --output OUT.h5 [--format text|jsonl|csv]
#include <cstdio>

#include <CLI/CLI.hpp>

#include "core/app_main.h"
#include "data/byte_tokenizer.h"
#include "data/prepare_dataset.h"
#include "tool_cli.h"

int main(int argc, char** argv) {
  return nss::run_app("nss_prepare_data", [&] {
    nss::data::PrepareOptions options;
    std::string format;
    CLI::App cli{"nss_prepare_data: text, JSONL or CSV -> byte-level token dataset (docs/data.md)"};
    cli.add_option("--input", options.inputs,
                   "Input file (repeatable): a text file is one document, a JSONL line one "
                   "record, a CSV row one JSON object")
        ->required();
    cli.add_option("--output", options.output, "Token dataset to write (HDF5)")->required();
    cli.add_option("--format", format, "text, jsonl or csv (default: from each file's extension)");
    if (!nss::parse_tool_arguments(cli, argc, argv, "nss_prepare_data",
                                   "nss_prepare_data --input PATH [--input PATH]... --output "
                                   "OUT.h5 [--format text|jsonl|csv]"))
      return nss::ExitCode::kOk;
    if (!format.empty()) options.format = nss::data::parse_input_format(format);
    const auto summary = nss::data::prepare_byte_level_dataset(options);
    std::printf("wrote %s: %lld documents, %lld tokens (%s, vocab_size %lld) from %lld bytes\n",
                options.output.c_str(), static_cast<long long>(summary.documents),
                static_cast<long long>(summary.tokens), nss::data::byte_tokenizer::kName,
                static_cast<long long>(nss::data::byte_tokenizer::kVocabSize),
                static_cast<long long>(summary.input_bytes));
    return nss::ExitCode::kOk;
  });
}
