// The tokenizer files of a Hugging Face model directory. An export of a model
// fine-tuned from such a directory carries them next to its weights, so that
// AutoTokenizer.from_pretrained and generate() (generation_config.json) work
// on the export alone.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace nss::hf {

/// The files copied. tokenizer.json is the one a fast tokenizer cannot do
/// without; the others are optional and many models lack some of them.
inline constexpr std::array<const char*, 4> kTokenizerFiles = {
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json"};

/// Copies each file of kTokenizerFiles that `source_dir` holds into
/// `target_dir` (write_output_file). Returns one line per file that was not
/// copied and should have been: all of them when `source_dir` is not a
/// directory, tokenizer.json when it is absent, any file that is not a regular
/// file or cannot be read. A write error in `target_dir` throws
/// output_location_error (exit 2): the export's location is at fault.
std::vector<std::string> copy_tokenizer_files(const std::string& source_dir,
                                              const std::string& target_dir);

}  // namespace nss::hf
