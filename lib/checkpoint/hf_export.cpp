#include "checkpoint/hf_export.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "checkpoint/finite_reads.h"
#include "checkpoint/layout.h"
#include "checkpoint/lora_merge.h"
#include "checkpoint/trained_model.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/output_location.h"
#include "core/temporary_files.h"
#include "hf/element_convert.h"
#include "hf/hf_config.h"
#include "hf/hf_weights_writer.h"
#include "hf/tokenizer_files.h"
#include "hf/weight_files.h"
#include "layout/sharded_state_layout.h"
#include "model/param_spec.h"
#include "privacy/privacy_report.h"

namespace fs = std::filesystem;

namespace nss::checkpoint {
namespace {

// One safetensors file, or the weight files of a Hugging Face directory.
class WeightSink {
 public:
  WeightSink(const std::string& path, const std::vector<hf::SafetensorsTensor>& tensors,
             bool directory, std::uint64_t max_shard_bytes) {
    if (directory)
      weights_ = std::make_unique<hf::HfWeightsWriter>(path, tensors, max_shard_bytes);
    else
      file_ = std::make_unique<hf::SafetensorsWriter>(path, tensors);
  }
  void write(const std::string& name, std::int64_t offset, std::int64_t count, const void* data,
             DType dtype) {
    if (weights_)
      weights_->write(name, offset, count, data, dtype);
    else
      file_->write(name, offset, count, data, dtype);
  }
  void commit() { weights_ ? weights_->commit() : file_->commit(); }

 private:
  std::unique_ptr<hf::HfWeightsWriter> weights_;
  std::unique_ptr<hf::SafetensorsWriter> file_;
};

// A directory built under a temporary name and renamed into place when complete.
class StagingDirectory {
 public:
  explicit StagingDirectory(std::string final_path)
      : final_{std::move(final_path), "consolidate"}, tmp_(temporary_path_for(final_.path)) {
    check_output_path(final_);
    std::error_code ec;
    fs::create_directory(tmp_, ec);
    if (ec) throw output_location_error("consolidate", "create", tmp_, ec.value());
  }
  ~StagingDirectory() {
    if (!committed_) remove_tree(tmp_);
  }
  const std::string& path() const { return tmp_; }
  std::string file(const std::string& name) const { return tmp_ + "/" + name; }
  void commit() {
    fsync_directory(tmp_);
    publish_output(tmp_, final_);
    committed_ = true;
    claim_.release();
  }

 private:
  OutputTarget final_;
  std::string tmp_;
  TemporaryClaim claim_{tmp_, TemporaryClaim::Kind::kFlatDirectory};
  bool committed_ = false;
};

DType output_type(DType stored, DType requested) {
  return hf::is_convertible_float(stored) ? requested : stored;
}

// Streams checkpoint tensors into `sink` under their output names.
void stream_into(CheckpointReader& reader, const std::vector<std::string>& names,
                 const std::string& prefix, std::uint64_t budget, WeightSink& sink) {
  for (const auto& name : names) {
    const DType stored = reader.tensor(name).dtype;
    stream_finite(reader, name, budget / 4,
                  [&](const void* data, std::uint64_t offset, std::uint64_t n) {
                    sink.write(prefix + name, static_cast<std::int64_t>(offset),
                               static_cast<std::int64_t>(n), data, stored);
                  });
  }
}

std::vector<hf::SafetensorsTensor> output_tensors(CheckpointReader& reader,
                                                  const std::vector<std::string>& names,
                                                  const std::string& prefix, DType dtype) {
  std::vector<hf::SafetensorsTensor> tensors;
  for (const auto& name : names) {
    const auto& record = reader.tensor(name);
    hf::SafetensorsTensor t;
    t.name = prefix + name;
    t.dtype = output_type(record.dtype, dtype);
    t.shape = record.shape;
    tensors.push_back(t);
  }
  return tensors;
}

// tie_word_embeddings must say what the tensors say, or HF loaders build the wrong model.
void check_tied_embeddings(const CheckpointIndex& index, const config::ModelConfig& model) {
  const bool has_head = index.tensors.count("lm_head.weight") > 0;
  if (model.tie_word_embeddings == has_head)
    throw CheckpointError("consolidate",
                          std::string("the configuration says tie_word_embeddings: ") +
                              (model.tie_word_embeddings ? "true" : "false") +
                              " but the checkpoint " + (has_head ? "has" : "has no") +
                              " lm_head.weight",
                          "the stored configuration does not match the saved tensors");
}

const config::Config& require_config(const TrainedModel& model, const std::string& why) {
  if (!model.config)
    throw CheckpointError("consolidate", "metadata.json state has no 'config', needed " + why,
                          "use --format hdf5, or a checkpoint written by nss_hpc's trainer");
  return *model.config;
}

// A directory export of a model fine-tuned from a pretrained directory carries
// that directory's tokenizer files. The weights are complete without them, so
// a file that cannot be copied is a warning, never an error, and never silent.
void complete_directory(StagingDirectory& staging, const TrainedModel& model,
                        const std::string& output) {
  if (!model.privacy.is_null())
    write_output_file(
        staging.file("privacy.json"),
        privacy::privacy_report(model.privacy, model.step, model.dataset).dump(2) + "\n",
        "consolidate");
  if (!model.base_path.empty())
    for (const auto& problem : hf::copy_tokenizer_files(model.base_path, staging.path()))
      spdlog::warn(
          "[consolidate] {}; AutoTokenizer will not load {} until the tokenizer files are "
          "copied into it by hand",
          problem, output);
  staging.commit();
}

// config.json with the token ids of the pretrained directory the run started from.
void write_config_json(StagingDirectory& staging, const config::ModelConfig& model,
                       const std::string& dtype, const std::string& base_path) {
  std::string problem;
  const hf::TokenIds ids = hf::read_token_ids(base_path, &problem);
  if (!problem.empty())
    spdlog::warn(
        "[consolidate] the base model's token ids could not be read ({}): config.json gets null "
        "bos/eos/pad ids; set them there by hand before generating with transformers",
        problem);
  write_output_file(staging.file(hf::kConfigFile), hf::hf_config_json(model, dtype, ids),
                    "consolidate");
}

std::string adapter_config_json(const config::Config& config, const std::string& base_path) {
  const auto& lora = config.training.lora;
  const nlohmann::json doc = {{"peft_type", "LORA"},
                              {"task_type", "CAUSAL_LM"},
                              {"base_model_name_or_path", base_path},
                              {"r", lora.rank},
                              {"lora_alpha", lora.alpha},
                              {"lora_dropout", lora.dropout},
                              {"target_modules", lora.targets},
                              {"bias", "none"},
                              {"fan_in_fan_out", false},
                              {"inference_mode", true},
                              {"use_rslora", false},
                              {"modules_to_save", nullptr}};
  return doc.dump(2) + "\n";
}

// --dequantized-base: the projections a QLoRA run quantised, round-tripped as it did.
RoundedBase rounded_base(const config::Config& config, const ConsolidateOptions& options) {
  if (!options.dequantized_base) return {};
  const auto& lora = config.training.lora;
  if (lora.quantize_base == config::QuantizeBase::kNone)
    throw UsageError("consolidate",
                     "--dequantized-base given, but this run trained on an unquantised base "
                     "(training.lora.quantize_base: none)",
                     "drop --dequantized-base: --merge-lora already merges onto what was trained");
  RoundedBase rounded;
  rounded.double_quant = lora.double_quant;
  for (const auto& spec : model::all_parameters(config.model, lora))
    if (spec.quantized) rounded.tensors.insert(spec.name);
  return rounded;
}

}  // namespace

std::uint64_t export_hf(CheckpointReader& reader, const ConsolidateOptions& options) {
  const std::string origin = reader.step_dir() + "/" + kIndexFile;
  const TrainedModel model = trained_model(reader.index(), origin);
  const bool directory = options.format == ConsolidateFormat::kHf;
  if (options.merge_lora && !model.lora)
    throw UsageError("consolidate",
                     "--merge-lora given, but " + reader.step_dir() + " holds no LoRA adapters",
                     "drop --merge-lora");
  if (options.merge_lora && model.config && model.base_path.empty())
    throw UsageError("consolidate",
                     "--merge-lora needs the base model the adapters were trained on, and " +
                         reader.step_dir() +
                         " was trained from a random initialisation (no model.from_pretrained)",
                     "export the adapters alone (drop --merge-lora), or fine-tune a pretrained "
                     "model (model.from_pretrained) to merge");
  std::unique_ptr<StagingDirectory> staging;
  if (directory) staging = std::make_unique<StagingDirectory>(options.output);
  const std::string dtype = dtype_name(options.dtype);

  if (model.lora && options.merge_lora) {
    const auto& config = require_config(model, "for alpha and r of the adapters");
    const double scale =
        config.training.lora.alpha / static_cast<double>(config.training.lora.rank);
    LoraMerger merger(reader, model.base_path, scale, options.max_memory,
                      rounded_base(config, options));
    const auto tensors = merger.tensors(options.dtype);
    WeightSink sink(directory ? staging->path() : options.output, tensors, directory,
                    options.max_shard_bytes);
    merger.write([&](const std::string& name, std::int64_t offset, std::int64_t n,
                     const float* data) { sink.write(name, offset, n, data, DType::kFloat32); });
    sink.commit();
    if (directory) {
      write_config_json(*staging, merger.base_config(), dtype, model.base_path);
      complete_directory(*staging, model, options.output);
    }
    spdlog::info("[consolidate] merged {} adapters into {} (scale {})", merger.merged_count(),
                 model.base_path, scale);
    return tensors.size();
  }

  std::vector<std::string> names;
  for (const auto& [name, record] : reader.index().tensors)
    if (!layout::is_optimizer_state(name) && (!model.lora || is_lora_tensor(name)))
      names.push_back(name);
  if (model.lora) {
    for (const auto& [name, record] : reader.index().tensors)
      if (!layout::is_optimizer_state(name) && !is_lora_tensor(name))
        spdlog::warn(
            "[consolidate] {} is not an adapter weight and is not in the adapter output; "
            "use --merge-lora to include it",
            name);
    const auto tensors = output_tensors(reader, names, kPeftPrefix, options.dtype);
    WeightSink sink(directory ? staging->file("adapter_model.safetensors") : options.output,
                    tensors, false, options.max_shard_bytes);
    stream_into(reader, names, kPeftPrefix, options.max_memory, sink);
    sink.commit();
    if (directory) {
      const auto& config = require_config(model, "for adapter_config.json");
      write_output_file(staging->file("adapter_config.json"),
                        adapter_config_json(config, model.base_path), "consolidate");
      complete_directory(*staging, model, options.output);
    }
    return tensors.size();
  }

  if (directory)
    check_tied_embeddings(reader.index(), require_config(model, "for config.json").model);
  const auto tensors = output_tensors(reader, names, "", options.dtype);
  WeightSink sink(directory ? staging->path() : options.output, tensors, directory,
                  options.max_shard_bytes);
  stream_into(reader, names, "", options.max_memory, sink);
  sink.commit();
  if (directory) {
    write_config_json(*staging, model.config->model, dtype, model.base_path);
    complete_directory(*staging, model, options.output);
  }
  return tensors.size();
}

}  // namespace nss::checkpoint
