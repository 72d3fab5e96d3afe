#include "data/input_file.h"

#include <cerrno>
#include <sys/stat.h>

#include "core/error.h"
#include "core/fs.h"

namespace nss::data {

std::ifstream open_input(const std::string& path, const char* flag) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int err = errno;
    throw DataError("data", "cannot read input " + path + ": " + errno_text(err),
                    std::string("check the ") + flag + " path");
  }
  if (!S_ISREG(info.st_mode))
    throw DataError("data", "input " + path + " is not a regular file",
                    std::string("pass regular files with ") + flag);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw DataError("data", "cannot read input " + path + ": " + errno_text(err),
                    "check the file's permissions");
  }
  return in;
}

void check_read(const std::ifstream& in, const std::string& path) {
  if (in.bad()) throw DataError("data", "error while reading input " + path);
}

void skip_bom(std::istream& in) {
  char head[3] = {};
  in.read(head, 3);
  if (in.gcount() == 3 && std::string(head, 3) == "\xEF\xBB\xBF") return;
  in.clear();
  in.seekg(0);
}

std::string where(const std::string& path, std::int64_t line) {
  return path + ":" + std::to_string(line);
}

nlohmann::ordered_json parse_jsonl_line(const std::string& line, const std::string& path,
                                        std::int64_t number) {
  try {
    return nlohmann::ordered_json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    std::string reason = e.what();
    const auto bracket = reason.find("] ");
    if (bracket != std::string::npos) reason.erase(0, bracket + 2);
    throw DataError("data", where(path, number) + ": invalid JSON: " + reason,
                    "each line of a JSONL file must be one JSON record in UTF-8");
  }
}

}  // namespace nss::data
