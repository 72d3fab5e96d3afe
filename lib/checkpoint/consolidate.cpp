#include "checkpoint/consolidate.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <vector>

#include <spdlog/spdlog.h>

#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/committed_step.h"
#include "checkpoint/finite_reads.h"
#include "checkpoint/hdf5_output.h"
#include "checkpoint/hf_export.h"
#include "checkpoint/layout.h"
#include "checkpoint/trained_model.h"
#include "checkpoint/verify.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/output_location.h"
#include "core/units.h"
#include "hf/element_convert.h"
#include "privacy/privacy_report.h"

namespace fs = std::filesystem;

namespace nss::checkpoint {
namespace {

OutputTarget output_target(const std::string& path) {
  return {path, "consolidate"};
}

void check_options(const ConsolidateOptions& options) {
  if (options.merge_lora && options.format == ConsolidateFormat::kHdf5)
    throw UsageError("consolidate", "--merge-lora writes Hugging Face weights",
                     "use --format hf or --format safetensors with --merge-lora");
  if (options.dequantized_base && !options.merge_lora)
    throw UsageError("consolidate", "--dequantized-base is the base --merge-lora merges onto",
                     "add --merge-lora, or drop --dequantized-base for the adapter alone");
  if (!hf::is_convertible_float(options.dtype))
    throw UsageError(
        "consolidate",
        std::string("--dtype must be a floating type, got ") + dtype_name(options.dtype),
        "use float32, bfloat16 or float16");
  if (options.max_memory < kMinConsolidateMemory)
    throw UsageError("consolidate",
                     "--max-memory " + format_bytes(options.max_memory) +
                         " is below the minimum of " + format_bytes(kMinConsolidateMemory),
                     "give at least 1MiB");
  if (options.max_shard_bytes == 0)
    throw UsageError("consolidate", "--max-shard-size must be positive",
                     "e.g. --max-shard-size 5GB");
  std::error_code ec;
  if (!fs::is_directory(options.step_dir, ec))
    throw UsageError("consolidate", options.step_dir + " is not a directory",
                     "give a committed step directory, e.g. runs/NAME/checkpoints/step_00000100");
  require_committed_step(options.step_dir);
  // What is at the output path is checked here; whether its location can
  // take the output is found out by creating it, alike for every format.
  check_output_path(output_target(options.output));
}

// Streams every tensor of `tensors` into `out` at the offsets given, converting
// floating types, with read and conversion windows inside the budget.
void stream_tensors(CheckpointReader& reader, const std::vector<TensorSpec>& tensors,
                    const std::map<std::string, std::uint64_t>& offsets, std::uint64_t budget,
                    OutputFile& out) {
  // One read window plus one converted window (up to 4x larger for 16-bit to
  // float64, at most 2x in practice) stay within the budget.
  const std::uint64_t window_bytes = budget / 4;
  std::vector<char> converted;
  for (const auto& t : tensors) {
    const auto offset = offsets.find(t.name);
    if (offset == offsets.end()) continue;
    const DType stored = reader.tensor(t.name).dtype;
    const std::size_t out_size = dtype_size(t.dtype);
    stream_finite(reader, t.name, window_bytes,
                  [&](const void* data, std::uint64_t tensor_offset, std::uint64_t count) {
                    const std::uint64_t at = offset->second + tensor_offset * out_size;
                    if (stored == t.dtype) {
                      out.write_at(at, data, count * out_size);
                      return;
                    }
                    converted.resize(count * out_size);
                    hf::convert_elements(data, stored, converted.data(), t.dtype,
                                         static_cast<std::int64_t>(count));
                    out.write_at(at, converted.data(), count * out_size);
                  });
  }
}

// Every tensor, optimizer state included, into one HDF5 file; returns bytes written.
std::uint64_t write_hdf5(CheckpointReader& reader, const ConsolidateOptions& options) {
  std::vector<TensorSpec> tensors;
  for (const auto& [name, record] : reader.index().tensors)
    tensors.push_back({name, record.shape,
                       hf::is_convertible_float(record.dtype) ? options.dtype : record.dtype});
  OutputFile out(output_target(options.output));
  // HDF5 cannot recover from a write that fails while it lays the file out
  // (the file can then not even be closed), so room for the data is checked
  // first; HDF5's create truncates the file again.
  std::uint64_t data_bytes = 0;
  for (const auto& t : tensors) data_bytes += element_count(t.shape) * dtype_size(t.dtype);
  out.reserve(data_bytes);
  const auto offsets = layout_hdf5_output(out.temporary_path(), tensors, reader.index().step,
                                          reader.index().state, options.file_locking);
  stream_tensors(reader, tensors, offsets, options.max_memory, out);
  out.commit();
  return out.bytes_written();
}

// Bytes of a file, or of every file in a directory.
std::uint64_t output_bytes(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return fs::file_size(path, ec);
  std::uint64_t bytes = 0;
  for (const auto& entry : fs::directory_iterator(path, ec))
    bytes += fs::file_size(entry.path(), ec);
  return bytes;
}

}  // namespace

ConsolidateReport consolidate(const ConsolidateOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_options(options);
  CheckpointReader reader(options.step_dir, options.file_locking);
  check_step_files(options.step_dir, reader.index());
  // A private run's guarantee goes with its weights: inside an hf directory
  // (export_hf), beside a single file.
  const nlohmann::json plan = privacy_settings(reader.index());
  const bool private_run = !plan.is_null();
  const OutputTarget guarantee = output_target(options.output + ".privacy.json");
  if (private_run && options.format != ConsolidateFormat::kHf) check_output_path(guarantee);

  ConsolidateReport report;
  report.output = options.output;
  if (options.format == ConsolidateFormat::kHdf5) {
    const auto written = write_hdf5(reader, options);
    report.tensors = reader.index().tensors.size();
    report.bytes_written = written;
  } else {
    report.tensors = export_hf(reader, options);
    report.bytes_written = output_bytes(options.output);
  }
  if (private_run && options.format != ConsolidateFormat::kHf)
    write_output_file(guarantee, privacy::privacy_report(plan, reader.index().step,
                                                         training_dataset(reader.index()))
                                         .dump(2) +
                                     "\n");
  report.bytes_read = reader.bytes_read();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("[consolidate] {} -> {}: {} tensors, {} read, {} written in {:.2f} s",
               options.step_dir, options.output, report.tensors, format_bytes(report.bytes_read),
               format_bytes(report.bytes_written), report.seconds);
  return report;
}

}  // namespace nss::checkpoint
