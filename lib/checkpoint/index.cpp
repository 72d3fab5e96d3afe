#include "checkpoint/index.h"

#include <algorithm>
#include <filesystem>

#include "checkpoint/checksum.h"
#include "checkpoint/damage.h"
#include "checkpoint/layout.h"
#include "core/error.h"
#include "core/fs.h"

namespace nss::checkpoint {
namespace {

using nlohmann::json;

// Field access that names the full path of whatever is missing or mistyped.
class Fields {
 public:
  explicit Fields(std::string origin) : origin_(std::move(origin)) {}

  const json& get(const json& object, const std::string& key, const std::string& path,
                  json::value_t type) const {
    if (!object.is_object()) fail(path, "is not an object");
    const auto it = object.find(key);
    if (it == object.end()) fail(path + key, "is missing");
    const bool ok = it->type() == type ||
                    (type == json::value_t::number_unsigned && it->is_number_integer() &&
                     it->get<std::int64_t>() >= 0) ||
                    (type == json::value_t::number_integer && it->is_number_integer());
    if (!ok) fail(path + key, std::string("has the wrong type (") + it->type_name() + ")");
    return *it;
  }
  std::uint64_t unsigned_at(const json& object, const std::string& key,
                            const std::string& path) const {
    return get(object, key, path, json::value_t::number_unsigned).get<std::uint64_t>();
  }
  std::string string_at(const json& object, const std::string& key, const std::string& path) const {
    return get(object, key, path, json::value_t::string).get<std::string>();
  }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw CheckpointDamage("checkpoint", origin_ + ": field '" + field + "' " + what,
                           "metadata.json is damaged or was not written by nss_hpc; this step "
                           "cannot be used");
  }

 private:
  std::string origin_;
};

ChunkRecord parse_chunk(const Fields& f, const json& j, const std::string& path) {
  ChunkRecord c;
  c.file = f.string_at(j, "file", path);
  c.dataset = f.string_at(j, "dataset", path);
  c.dataset_offset = f.unsigned_at(j, "dataset_offset", path);
  c.tensor_offset = f.unsigned_at(j, "tensor_offset", path);
  c.length = f.unsigned_at(j, "length", path);
  for (const auto& digest : f.get(j, "checksums", path, json::value_t::array)) {
    if (!digest.is_string() || digest.get<std::string>().size() != 16)
      f.fail(path + "checksums", "holds an entry that is not 16 hex digits");
    c.checksums.push_back(digest.get<std::string>());
  }
  if (c.file.find('/') != std::string::npos || c.file.empty() || c.file[0] == '.')
    f.fail(path + "file", "is not a plain file name inside the step directory");
  return c;
}

TensorRecord parse_tensor(const Fields& f, const json& j, const std::string& path) {
  TensorRecord t;
  for (const auto& d : f.get(j, "shape", path, json::value_t::array)) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
      f.fail(path + "shape", "holds a dimension that is not a non-negative integer");
    t.shape.push_back(d.get<std::int64_t>());
  }
  try {
    t.dtype = parse_dtype(f.string_at(j, "dtype", path));
  } catch (const UsageError&) {
    f.fail(path + "dtype", "names an unknown dtype");
  }
  const auto& chunks = f.get(j, "chunks", path, json::value_t::array);
  for (std::size_t i = 0; i < chunks.size(); ++i)
    t.chunks.push_back(parse_chunk(f, chunks[i], path + "chunks[" + std::to_string(i) + "]."));
  std::sort(t.chunks.begin(), t.chunks.end(), [](const ChunkRecord& a, const ChunkRecord& b) {
    return a.tensor_offset < b.tensor_offset;
  });
  if (j.contains("column_blocks")) {
    const std::uint64_t blocks = f.unsigned_at(j, "column_blocks", path);
    if (blocks < 1 || t.shape.size() != 2 || t.shape[1] % static_cast<std::int64_t>(blocks) != 0)
      f.fail(path + "column_blocks", "must divide the columns of a matrix");
    t.column_blocks = static_cast<int>(blocks);
  }
  return t;
}

}  // namespace

int format_version(const CheckpointIndex& index) {
  for (const auto& [name, t] : index.tensors)
    if (t.column_blocks > 1) return 2;
  return 1;
}

std::uint64_t chunk_bytes(const TensorRecord& tensor, const ChunkRecord& chunk) {
  return chunk.length * dtype_size(tensor.dtype);
}

std::string index_to_text(const CheckpointIndex& index) {
  json tensors = json::object();
  for (const auto& [name, t] : index.tensors) {
    json chunks = json::array();
    for (const auto& c : t.chunks)
      chunks.push_back({{"file", c.file},
                        {"dataset", c.dataset},
                        {"dataset_offset", c.dataset_offset},
                        {"tensor_offset", c.tensor_offset},
                        {"length", c.length},
                        {"checksums", c.checksums}});
    tensors[name] = {{"shape", t.shape}, {"dtype", dtype_name(t.dtype)}, {"chunks", chunks}};
    if (t.column_blocks > 1) tensors[name]["column_blocks"] = t.column_blocks;
  }
  json files = json::object();
  for (const auto& [name, bytes] : index.file_bytes) files[name] = {{"bytes", bytes}};
  json doc = {{"format", kFormatName},
              {"version", format_version(index)},
              {"step", index.step},
              {"world_size", index.world_size},
              {"checksum", kChecksumName},
              {"checksum_block_bytes", index.checksum_block_bytes},
              {"tensors", tensors},
              {"state", index.state},
              {"files", files}};
  if (!index.secrets.empty()) doc["secrets"] = index.secrets;
  return doc.dump(1) + "\n";
}

CheckpointIndex parse_index(const std::string& text, const std::string& origin) {
  const Fields f(origin);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw CheckpointDamage("checkpoint", origin + " is not valid JSON (" + e.what() + ")",
                           "metadata.json is truncated or damaged; this step cannot be used");
  }
  if (f.string_at(doc, "format", "") != kFormatName)
    f.fail("format", "is not \"" + std::string(kFormatName) + "\"");
  const auto version = f.get(doc, "version", "", json::value_t::number_integer).get<int>();
  if (version < 1 || version > kFormatVersion)
    throw CheckpointError("checkpoint",
                          origin + ": format version " + std::to_string(version) +
                              ", this nss_hpc reads versions 1 to " +
                              std::to_string(kFormatVersion),
                          "use the nss_hpc version that wrote this checkpoint");
  if (f.string_at(doc, "checksum", "") != kChecksumName)
    f.fail("checksum", "is not \"" + std::string(kChecksumName) + "\"");
  CheckpointIndex index;
  index.step = f.get(doc, "step", "", json::value_t::number_integer).get<std::int64_t>();
  index.world_size = static_cast<int>(f.unsigned_at(doc, "world_size", ""));
  index.checksum_block_bytes = f.unsigned_at(doc, "checksum_block_bytes", "");
  if (index.checksum_block_bytes == 0 || index.checksum_block_bytes % 8 != 0)
    f.fail("checksum_block_bytes", "must be a positive multiple of 8");
  for (const auto& [name, t] : f.get(doc, "tensors", "", json::value_t::object).items())
    index.tensors[name] = parse_tensor(f, t, "tensors." + name + ".");
  index.state = f.get(doc, "state", "", json::value_t::object);
  if (doc.contains("secrets")) index.secrets = f.get(doc, "secrets", "", json::value_t::object);
  for (const auto& [name, file] : f.get(doc, "files", "", json::value_t::object).items())
    index.file_bytes[name] = f.unsigned_at(file, "bytes", "files." + name + ".");
  for (const auto& [name, t] : index.tensors)
    for (const auto& c : t.chunks)
      if (!index.file_bytes.count(c.file))
        f.fail("tensors." + name + ".chunks", "names " + c.file + ", which 'files' does not list");
  return index;
}

std::string read_index_text(const std::string& step_dir) {
  const std::string path = (std::filesystem::path(step_dir) / kIndexFile).string();
  if (!std::filesystem::is_regular_file(path))
    throw CheckpointError("checkpoint", path + " does not exist",
                          "a step directory without metadata.json was never committed");
  try {
    return read_text_file(path, "checkpoint");
  } catch (const Error& e) {
    throw CheckpointError("checkpoint", e.message(), "check the file's permissions");
  }
}

CheckpointIndex read_index(const std::string& step_dir) {
  return parse_index(read_index_text(step_dir),
                     (std::filesystem::path(step_dir) / kIndexFile).string());
}

std::vector<std::string> coverage_problems(const CheckpointIndex& index) {
  std::vector<std::string> problems;
  for (const auto& [name, t] : index.tensors) {
    const std::uint64_t numel = element_count(t.shape);
    std::uint64_t next = 0;
    for (const auto& c : t.chunks) {
      const std::string where = "tensor " + name + " chunk [" + std::to_string(c.tensor_offset) +
                                ", " + std::to_string(c.tensor_offset + c.length) + ") in " +
                                c.file + " " + c.dataset;
      if (c.tensor_offset > next)
        problems.push_back("tensor " + name + ": elements [" + std::to_string(next) + ", " +
                           std::to_string(c.tensor_offset) + ") are in no chunk");
      else if (c.tensor_offset < next)
        problems.push_back(where + " overlaps the previous chunk");
      if (c.length == 0) problems.push_back(where + " is empty");
      const auto blocks = checksum_block_count(chunk_bytes(t, c), index.checksum_block_bytes);
      if (c.checksums.size() != blocks)
        problems.push_back(where + " has " + std::to_string(c.checksums.size()) +
                           " checksums, its size needs " + std::to_string(blocks));
      next = std::max(next, c.tensor_offset + c.length);
    }
    if (next < numel)
      problems.push_back("tensor " + name + ": elements [" + std::to_string(next) + ", " +
                         std::to_string(numel) + ") are in no chunk");
    else if (next > numel)
      problems.push_back("tensor " + name + ": chunks reach element " + std::to_string(next) +
                         " of a tensor with " + std::to_string(numel) + " elements");
  }
  return problems;
}

}  // namespace nss::checkpoint
