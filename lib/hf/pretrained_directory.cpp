#include "hf/pretrained_directory.h"

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "hf/element_convert.h"
#include "hf/hf_config.h"
#include "hf/weight_files.h"

namespace nss::hf {
namespace {

namespace fs = std::filesystem;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool exists(const std::string& path) {
  std::error_code error;
  return fs::exists(path, error);
}

}  // namespace

void require_local_model_dir(const std::string& dir) {
  std::error_code error;
  const fs::file_status status = fs::status(dir, error);
  if (fs::is_directory(status)) return;
  if (fs::exists(status))
    throw DataError("hf", dir + " is not a directory",
                    "point at the directory that holds config.json and the .safetensors files");
  static const std::regex kHubId(R"([A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+)");
  if (std::regex_match(dir, kHubId))
    throw DataError("hf",
                    "'" + dir +
                        "' is not a local directory; if it is a Hugging Face hub id: "
                        "nss_hpc never downloads anything",
                    "download it first where there is internet access, e.g. `huggingface-cli "
                    "download " +
                        dir + " --local-dir /path/to/" + fs::path(dir).filename().string() +
                        " --include '*.json' '*.safetensors'`, then point at /path/to/" +
                        fs::path(dir).filename().string());
  throw DataError("hf", "model directory " + dir + " does not exist",
                  "point at a local Hugging Face model directory (config.json + .safetensors)");
}

std::shared_ptr<const PretrainedDirectory> PretrainedDirectory::open(const std::string& dir) {
  require_local_model_dir(dir);
  std::shared_ptr<PretrainedDirectory> result(new PretrainedDirectory());
  result->dir_ = dir;
  const std::string config_path = dir + "/" + kConfigFile;
  if (!exists(config_path))
    throw DataError("hf", dir + " has no " + kConfigFile,
                    "copy the model's config.json into the directory with its weights");
  result->config_ = read_hf_config(config_path);
  // transformers' order: the single file wins over an index.
  if (exists(dir + "/" + kWeightsFile))
    result->open_single_file();
  else if (exists(dir + "/" + kWeightsIndexFile))
    result->open_shards();
  else if (exists(dir + "/pytorch_model.bin") || exists(dir + "/pytorch_model.bin.index.json"))
    throw DataError("hf", dir + " holds only PyTorch pickle weights (pytorch_model.bin)",
                    "nss_hpc reads safetensors; convert once with transformers: "
                    "AutoModelForCausalLM.from_pretrained(DIR).save_pretrained(DIR, "
                    "safe_serialization=True)");
  else
    throw DataError("hf", dir + " has neither " + kWeightsFile + " nor " + kWeightsIndexFile,
                    "download the .safetensors weights into the directory");
  return result;
}

void PretrainedDirectory::open_single_file() {
  weight_files_ = {kWeightsFile};
  const auto file = SafetensorsFile::open(dir_ + "/" + kWeightsFile);
  for (const auto& tensor : file->tensors()) tensors_[tensor.name] = Entry{file, &tensor};
}

void PretrainedDirectory::open_shards() {
  const std::string index_path = dir_ + "/" + kWeightsIndexFile;
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(read_text_file(index_path, "hf"));
  } catch (const nlohmann::json::parse_error& e) {
    throw DataError("hf", index_path + " is not valid JSON: " + e.what(),
                    "download the index again with the weights");
  }
  const auto map = index.is_object() ? index.find("weight_map") : index.end();
  if (!index.is_object() || map == index.end() || !map->is_object())
    throw DataError("hf", index_path + " has no \"weight_map\" object",
                    "download the index again with the weights");

  weight_files_ = {kWeightsIndexFile};
  std::map<std::string, std::shared_ptr<const SafetensorsFile>> files;
  for (const auto& [name, file_value] : map->items()) {
    if (!file_value.is_string())
      throw DataError("hf", index_path + ": weight_map entry '" + name + "' must be a file name");
    const std::string file_name = file_value.get<std::string>();
    if (file_name.empty() || file_name.find('/') != std::string::npos || file_name == "..")
      throw DataError("hf", index_path + ": weight_map entry '" + name + "' names '" + file_name +
                                "', which is not a file in the directory");
    auto& file = files[file_name];
    if (!file) {
      const std::string path = dir_ + "/" + file_name;
      if (!exists(path))
        throw DataError("hf", path + " is missing (" + kWeightsIndexFile + " lists it)",
                        "download every shard the index names");
      file = SafetensorsFile::open(path);
      weight_files_.push_back(file_name);
    }
    const SafetensorsTensor* tensor = file->find(name);
    if (!tensor)
      throw DataError("hf",
                      index_path + " places '" + name + "' in " + file_name +
                          ", but that file has no such tensor",
                      "the index and the shards come from different downloads; fetch them again");
    tensors_[name] = Entry{file, tensor};
  }
}

std::vector<std::string> PretrainedDirectory::tensor_names() const {
  std::vector<std::string> names;
  for (const auto& entry : tensors_) names.push_back(entry.first);
  return names;
}

const SafetensorsTensor* PretrainedDirectory::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.tensor;
}

void PretrainedDirectory::require_tensor(const std::string& name,
                                         const std::vector<std::int64_t>& shape) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw DataError(
        "hf",
        dir_ + " has no tensor '" + name + "' (needed by the model " + kConfigFile + " describes)",
        "the weights and config.json must come from the same model");
  const SafetensorsTensor& tensor = *it->second.tensor;
  if (tensor.shape != shape)
    throw DataError("hf",
                    it->second.file->path() + ": tensor '" + name + "' has shape " +
                        shape_text(tensor.shape) + " but " + kConfigFile + " implies " +
                        shape_text(shape),
                    "the weights and config.json must come from the same model");
  if (!is_convertible_float(tensor.dtype))
    throw DataError("hf", it->second.file->path() + ": tensor '" + name + "' has dtype " +
                              safetensors_dtype_name(tensor.dtype) +
                              "; weights must be F32, BF16 or F16");
}

void PretrainedDirectory::read_float32(const std::string& name, std::int64_t offset,
                                       std::int64_t count, float* out) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw DataError("hf", dir_ + " has no tensor '" + name + "'",
                    "the weights and config.json must come from the same model");
  it->second.file->read_float32(name, offset, count, out);
}

}  // namespace nss::hf
