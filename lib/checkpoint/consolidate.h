// Offline consolidation of a committed step into one file, streamed window by
// window so that memory stays under a budget whatever the model size; every
// checksum is verified as the bytes pass, and the output appears atomically
// (temporary name, fsync, rename) only when everything verified.
#pragma once

#include <cstdint>
#include <string>

#include "config/choices.h"
#include "core/dtype.h"

namespace nss::checkpoint {

/// --format: one HDF5 file with every tensor; one safetensors file of the
/// model; a Hugging Face directory (hf_export.h).
enum class ConsolidateFormat { kHdf5, kSafetensors, kHf };

struct ConsolidateOptions {
  std::string step_dir;
  std::string output;
  ConsolidateFormat format = ConsolidateFormat::kHdf5;
  DType dtype = DType::kFloat32;          // floating tensors are written in this type
  std::uint64_t max_memory = 256u << 20;  // budget for the data buffers
  bool merge_lora = false;
  bool dequantized_base = false;  // --merge-lora onto dequant(quant(W)) of a QLoRA run's base
  bool file_locking = true;
  std::uint64_t max_shard_bytes = 5'000'000'000;  // hf: shard model.safetensors above this
};

struct ConsolidateReport {
  std::string output;
  std::uint64_t tensors = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  double seconds = 0;
};

/// Smallest --max-memory accepted.
inline constexpr std::uint64_t kMinConsolidateMemory = 1u << 20;

/// Consolidates; throws UsageError (exit 2) for bad options (existing output,
/// budget too small) and for an output location that cannot
/// take the output (output_location.h), CheckpointError (exit 5) for a step
/// that is not committed or is damaged, DataError (exit 4) for a value that is
/// not finite, in the step or in a LoRA base; nothing is left at the output
/// path then. hdf5 holds every tensor, optimizer state included; safetensors
/// and hf hold the model (see hf_export.h).
ConsolidateReport consolidate(const ConsolidateOptions& options);

}  // namespace nss::checkpoint

namespace nss::config {
template <>
struct ChoiceNames<checkpoint::ConsolidateFormat> {
  static constexpr std::array<std::pair<checkpoint::ConsolidateFormat, const char*>, 3> names{
      {{checkpoint::ConsolidateFormat::kHdf5, "hdf5"},
       {checkpoint::ConsolidateFormat::kSafetensors, "safetensors"},
       {checkpoint::ConsolidateFormat::kHf, "hf"}}};
};
}  // namespace nss::config
