#include "hf/tokenizer_files.h"

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "core/output_location.h"

namespace fs = std::filesystem;

namespace nss::hf {

std::vector<std::string> copy_tokenizer_files(const std::string& source_dir,
                                              const std::string& target_dir) {
  std::error_code ec;
  if (!fs::is_directory(source_dir, ec)) {
    std::string names;
    for (const char* name : kTokenizerFiles) names += std::string(names.empty() ? "" : ", ") + name;
    return {source_dir + " is not a directory: " + names + " not copied from it"};
  }
  std::vector<std::string> problems;
  for (const std::string name : kTokenizerFiles) {
    const std::string source = source_dir + "/" + name;
    const auto status = fs::status(source, ec);
    if (!fs::exists(status)) {
      // Only tokenizer.json (listed first) is indispensable.
      if (name == kTokenizerFiles[0]) problems.push_back(source + " does not exist");
      continue;
    }
    if (!fs::is_regular_file(status)) {
      problems.push_back(source + " is not a regular file");
      continue;
    }
    try {
      write_output_file(target_dir + "/" + name, read_text_file(source, "hf"), "hf");
    } catch (const DataError& e) {
      problems.push_back(e.message());
    }
  }
  return problems;
}

}  // namespace nss::hf
