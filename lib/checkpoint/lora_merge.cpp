#include "checkpoint/lora_merge.h"

#include <algorithm>
#include <sys/mman.h>
#include <unistd.h>

#include "checkpoint/finite_reads.h"
#include "checkpoint/layout.h"
#include "checkpoint/trained_model.h"
#include "core/error.h"
#include "core/units.h"
#include "hf/element_convert.h"
#include "hf/pretrained_directory.h"
#include "hf/weight_files.h"
#include "layout/sharded_state_layout.h"
#include "quant/nf4_storage.h"

namespace nss::checkpoint {
namespace {

// Gives the pages of a consumed part of a read-only mapping back, so reading a
// whole base model never makes it resident all at once.
void drop_pages(const unsigned char* begin, std::uint64_t bytes) {
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t lo = reinterpret_cast<std::uintptr_t>(begin) & ~(page - 1);
  const std::uintptr_t hi = reinterpret_cast<std::uintptr_t>(begin) + bytes;
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

std::string strip_suffix(const std::string& name, const std::string& suffix) {
  return name.substr(0, name.size() - suffix.size());
}

}  // namespace

LoraMerger::LoraMerger(CheckpointReader& reader, const std::string& base_dir, double scale,
                       std::uint64_t budget, RoundedBase rounded)
    : reader_(reader), scale_(scale), budget_(budget), rounded_(std::move(rounded)) {
  const auto base = hf::PretrainedDirectory::open(base_dir);
  base_config_ = base->config();
  for (const auto& file_name : base->weight_files()) {
    if (file_name == hf::kWeightsIndexFile) continue;
    const auto file = hf::SafetensorsFile::open(base_dir + "/" + file_name);
    for (const auto& t : file->tensors()) base_[t.name] = {file, &t};
  }
  std::uint64_t largest_a = 0;
  for (const auto& [name, record] : reader.index().tensors) {
    if (layout::is_optimizer_state(name) || !is_lora_tensor(name) ||
        name.compare(name.size() - std::string(kLoraASuffix).size(), std::string::npos,
                     kLoraASuffix) != 0)
      continue;
    const std::string module = strip_suffix(name, kLoraASuffix);
    const std::string weight = module + ".weight", b_name = module + kLoraBSuffix;
    const auto source = base_.find(weight);
    const auto b = reader.index().tensors.find(b_name);
    if (source == base_.end())
      throw CheckpointError("consolidate",
                            "adapter " + name + " has no base weight " + weight + " in " + base_dir,
                            "the base model is not the one this adapter was trained on");
    if (b == reader.index().tensors.end())
      throw CheckpointError("consolidate", "adapter " + name + " has no " + b_name);
    const auto& w_shape = source->second.tensor->shape;
    const auto& a_shape = record.shape;
    const auto& b_shape = b->second.shape;
    if (w_shape.size() != 2 || a_shape.size() != 2 || b_shape.size() != 2 ||
        a_shape[1] != w_shape[1] || b_shape[0] != w_shape[0] || a_shape[0] != b_shape[1])
      throw CheckpointError("consolidate",
                            "adapter of " + weight + " does not fit: base " + shape_text(w_shape) +
                                ", lora_A " + shape_text(a_shape) + ", lora_B " +
                                shape_text(b_shape),
                            "the base model is not the one this adapter was trained on");
    adapters_[weight] = {name, b_name, a_shape[0]};
    largest_a = std::max<std::uint64_t>(largest_a, element_count(a_shape) * 4);
  }
  // A whole, one checksum block of scratch for partly read blocks, and one row
  // (base row, its float copy, B row, accumulator) must fit.
  std::int64_t widest = 1;
  for (const auto& [name, source] : base_)
    if (!source.tensor->shape.empty()) widest = std::max(widest, source.tensor->shape.back());
  std::uint64_t largest_rounded = 0;  // a round-tripped weight is held whole
  for (const auto& name : rounded_.tensors) {
    const auto source = base_.find(name);
    if (source == base_.end())
      throw CheckpointError("consolidate",
                            "the QLoRA run quantised " + name + ", which " + base_dir + " lacks",
                            "the base model is not the one this adapter was trained on");
    largest_rounded = std::max<std::uint64_t>(
        largest_rounded, static_cast<std::uint64_t>(source->second.tensor->numel()) * 4);
  }
  const std::uint64_t need = largest_a + largest_rounded + reader.index().checksum_block_bytes +
                             static_cast<std::uint64_t>(widest) * 16;
  if (need > budget)
    throw UsageError(
        "consolidate",
        "--merge-lora needs --max-memory of at least " + format_bytes(need) + " for this model",
        "raise --max-memory");
}

std::vector<hf::SafetensorsTensor> LoraMerger::tensors(DType dtype) const {
  std::vector<hf::SafetensorsTensor> out;
  for (const auto& [name, source] : base_) {
    hf::SafetensorsTensor t = *source.tensor;
    if (hf::is_convertible_float(t.dtype)) t.dtype = dtype;
    out.push_back(t);
  }
  return out;
}

void LoraMerger::write(
    const std::function<void(const std::string&, std::int64_t, std::int64_t, const float*)>& sink) {
  for (const auto& [name, source] : base_) {
    if (!hf::is_convertible_float(source.tensor->dtype))
      throw DataError("consolidate", "base tensor " + name + " is not floating point",
                      "only float32/float64/bfloat16/float16 base weights can be merged");
    const auto adapter = adapters_.find(name);
    if (adapter == adapters_.end())
      copy(name, source, sink);
    else
      merge(name, source, adapter->second, sink);
  }
}

void LoraMerger::copy(
    const std::string& name, const Source& source,
    const std::function<void(const std::string&, std::int64_t, std::int64_t, const float*)>& sink) {
  const std::int64_t numel = source.tensor->numel();
  const std::int64_t window = std::max<std::int64_t>(1, static_cast<std::int64_t>(budget_ / 8));
  std::vector<float> buffer(
      static_cast<std::size_t>(std::min(window, std::max<std::int64_t>(numel, 1))));
  const std::size_t esize = dtype_size(source.tensor->dtype);
  for (std::int64_t done = 0; done < numel; done += window) {
    const std::int64_t n = std::min(window, numel - done);
    read_base(name, source, done, n, buffer.data());
    sink(name, done, n, buffer.data());
    drop_pages(source.file->bytes(*source.tensor) + done * esize, n * esize);
  }
}

void LoraMerger::read_checkpoint_float(const std::string& tensor, std::int64_t offset,
                                       std::int64_t count, float* out) {
  const DType stored = reader_.tensor(tensor).dtype;
  if (stored == DType::kFloat32) {
    read_finite(reader_, tensor, offset, count, out);
    return;
  }
  raw_.resize(count * dtype_size(stored));
  read_finite(reader_, tensor, offset, count, raw_.data());
  hf::convert_elements(raw_.data(), stored, out, DType::kFloat32, count);
}

void LoraMerger::read_base(const std::string& name, const Source& source, std::int64_t offset,
                           std::int64_t count, float* out) {
  if (rounded_.tensors.count(name) == 0) {
    source.file->read_float32(name, offset, count, out);
    return;
  }
  if (rounded_name_ != name) {  // NF4 blocks and double quantisation's mean span the tensor
    const std::int64_t numel = source.tensor->numel();
    rounded_values_.assign(static_cast<std::size_t>(numel), 0.0f);
    source.file->read_float32(name, 0, numel, rounded_values_.data());
    try {
      quant::nf4_round_trip(rounded_values_.data(), numel, rounded_.double_quant,
                            rounded_values_.data());
    } catch (const DataError& e) {
      throw DataError("consolidate", "base weight " + name + ": " + e.message(), e.hint());
    }
    rounded_name_ = name;
  }
  std::copy_n(rounded_values_.begin() + offset, count, out);
}

void LoraMerger::merge(
    const std::string& name, const Source& source, const Adapter& adapter,
    const std::function<void(const std::string&, std::int64_t, std::int64_t, const float*)>& sink) {
  const std::int64_t rows = source.tensor->shape[0], cols = source.tensor->shape[1];
  const std::int64_t r = adapter.rank;
  std::vector<float> a(static_cast<std::size_t>(r * cols));
  read_checkpoint_float(adapter.a, 0, r * cols, a.data());
  const std::uint64_t fixed = a.size() * 4 + reader_.index().checksum_block_bytes + cols * 4;
  const std::uint64_t per_row = static_cast<std::uint64_t>(cols) * 12 + r * 8;
  const std::int64_t window =
      std::max<std::int64_t>(1, static_cast<std::int64_t>((budget_ - fixed) / per_row));
  std::vector<float> w(static_cast<std::size_t>(std::min(window, rows) * cols));
  std::vector<float> b(static_cast<std::size_t>(std::min(window, rows) * r));
  std::vector<float> acc(static_cast<std::size_t>(cols));
  const std::size_t esize = dtype_size(source.tensor->dtype);
  const float scale = static_cast<float>(scale_);
  for (std::int64_t row = 0; row < rows; row += window) {
    const std::int64_t n = std::min(window, rows - row);
    read_base(name, source, row * cols, n * cols, w.data());
    read_checkpoint_float(adapter.b, row * r, n * r, b.data());
    for (std::int64_t i = 0; i < n; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (std::int64_t k = 0; k < r; ++k) {
        const float bik = b[i * r + k];
        const float* ak = a.data() + k * cols;
        for (std::int64_t j = 0; j < cols; ++j) acc[j] += bik * ak[j];
      }
      float* wi = w.data() + i * cols;
      for (std::int64_t j = 0; j < cols; ++j) wi[j] += scale * acc[j];
    }
    sink(name, row * cols, n * cols, w.data());
    drop_pages(source.file->bytes(*source.tensor) + row * cols * esize, n * cols * esize);
  }
}

}  // namespace nss::checkpoint
