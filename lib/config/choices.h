// Keys whose value is one of a fixed set of names: each is an enum with one
// table of names, which the YAML reader and writer, the reference, the tools'
// choice options and every message share (value_codec.h reads and writes any
// such enum). One parser, choice_of, reads them all the same way: surrounding
// blanks ignored, any case; an enum whose names include an on and an off
// choice (ChoiceBooleans) also takes YAML's booleans for them.
#pragma once

#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace nss::config {

/// Specialised per enum: `static constexpr std::array<std::pair<E, const char*>, N> names`.
template <class E>
struct ChoiceNames;

template <class E, class = void>
struct is_choice : std::false_type {};
template <class E>
struct is_choice<E, std::void_t<decltype(ChoiceNames<E>::names)>> : std::true_type {};
template <class E>
inline constexpr bool is_choice_v = is_choice<E>::value;

/// The name of `value` as YAML spells it.
template <class E>
const char* choice_name(E value) {
  for (const auto& [choice, name] : ChoiceNames<E>::names)
    if (choice == value) return name;
  return "?";
}

/// The choices YAML's booleans stand for, where an enum has an on and an off
/// choice: specialised per enum with `static constexpr E on, off`.
template <class E>
struct ChoiceBooleans;

template <class E, class = void>
struct has_choice_booleans : std::false_type {};
template <class E>
struct has_choice_booleans<E, std::void_t<decltype(ChoiceBooleans<E>::on)>> : std::true_type {};

/// YAML 1.1's spellings of true and false, the one alias table of every choice.
inline constexpr std::array<const char*, 3> kTrueSpellings{"true", "yes", "on"};
inline constexpr std::array<const char*, 3> kFalseSpellings{"false", "no", "off"};

/// `text` without surrounding blanks, compared with a lower-case `name` in any case.
inline bool names_choice(std::string_view text, std::string_view name) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  if (text.size() != name.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

/// The value `text` names, or nullopt: a name (blanks around it ignored, any
/// case), or a boolean spelling for an enum with ChoiceBooleans.
template <class E>
std::optional<E> choice_of(std::string_view text) {
  for (const auto& [choice, choice_name] : ChoiceNames<E>::names)
    if (names_choice(text, choice_name)) return choice;
  if constexpr (has_choice_booleans<E>::value) {
    for (const char* spelling : kTrueSpellings)
      if (names_choice(text, spelling)) return ChoiceBooleans<E>::on;
    for (const char* spelling : kFalseSpellings)
      if (names_choice(text, spelling)) return ChoiceBooleans<E>::off;
  }
  return std::nullopt;
}

/// ", or true/yes/on for full and false/no/off for none" where an enum takes
/// booleans, else "" (for the reference).
template <class E>
std::string choice_booleans_note() {
  if constexpr (has_choice_booleans<E>::value)
    return std::string(" (or a boolean: true/yes/on for ") + choice_name(ChoiceBooleans<E>::on) +
           ", false/no/off for " + choice_name(ChoiceBooleans<E>::off) + ")";
  return "";
}

/// "auto, fp32, bf16".
template <class E>
std::string choice_list() {
  std::string list;
  for (const auto& [choice, name] : ChoiceNames<E>::names) {
    (void)choice;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  return list;
}

/// training.dtype: the gather/compute dtype (masters and reductions stay fp32).
enum class ComputeDtype { kAuto, kFp32, kBf16 };
template <>
struct ChoiceNames<ComputeDtype> {
  static constexpr std::array<std::pair<ComputeDtype, const char*>, 3> names{
      {{ComputeDtype::kAuto, "auto"},
       {ComputeDtype::kFp32, "fp32"},
       {ComputeDtype::kBf16, "bf16"}}};
};

/// training.lr_schedule: the decay after warmup.
enum class LrSchedule { kCosine, kLinear, kConstant };
template <>
struct ChoiceNames<LrSchedule> {
  static constexpr std::array<std::pair<LrSchedule, const char*>, 3> names{
      {{LrSchedule::kCosine, "cosine"},
       {LrSchedule::kLinear, "linear"},
       {LrSchedule::kConstant, "constant"}}};
};

/// training.lora.quantize_base: how the frozen base's projections are stored (QLoRA).
enum class QuantizeBase { kNone, kNf4 };
template <>
struct ChoiceNames<QuantizeBase> {
  static constexpr std::array<std::pair<QuantizeBase, const char*>, 2> names{
      {{QuantizeBase::kNone, "none"}, {QuantizeBase::kNf4, "nf4"}}};
};

/// training.activation_checkpointing: what a unit's backward recomputes.
/// full: everything (only the unit's input is kept); selective: everything
/// but a decoder block's attention, whose graph forward keeps; none: nothing
/// (the unit's whole graph is kept).
enum class Recompute { kFull, kSelective, kNone };
template <>
struct ChoiceNames<Recompute> {
  static constexpr std::array<std::pair<Recompute, const char*>, 3> names{
      {{Recompute::kFull, "full"},
       {Recompute::kSelective, "selective"},
       {Recompute::kNone, "none"}}};
};
/// The key was a boolean before selective recompute: true is full, false none.
template <>
struct ChoiceBooleans<Recompute> {
  static constexpr Recompute on = Recompute::kFull;
  static constexpr Recompute off = Recompute::kNone;
};

/// parallel.reshard_after_forward: free a unit's gathered parameters after
/// its forward (true) or keep them until its backward (false); auto follows
/// training.activation_checkpointing (true with recompute, false without).
enum class ReshardPolicy { kAuto, kTrue, kFalse };
template <>
struct ChoiceNames<ReshardPolicy> {
  static constexpr std::array<std::pair<ReshardPolicy, const char*>, 3> names{
      {{ReshardPolicy::kAuto, "auto"},
       {ReshardPolicy::kTrue, "true"},
       {ReshardPolicy::kFalse, "false"}}};
};
template <>
struct ChoiceBooleans<ReshardPolicy> {
  static constexpr ReshardPolicy on = ReshardPolicy::kTrue;
  static constexpr ReshardPolicy off = ReshardPolicy::kFalse;
};

/// privacy.accountant: how the privacy spent is computed (docs/privacy.md).
enum class PrivacyAccountant { kPrv, kRdp };
template <>
struct ChoiceNames<PrivacyAccountant> {
  static constexpr std::array<std::pair<PrivacyAccountant, const char*>, 2> names{
      {{PrivacyAccountant::kPrv, "prv"}, {PrivacyAccountant::kRdp, "rdp"}}};
};

/// privacy.sampling: how each step's batch is drawn under privacy.
enum class PrivacySampling { kPoisson, kShuffle };
template <>
struct ChoiceNames<PrivacySampling> {
  static constexpr std::array<std::pair<PrivacySampling, const char*>, 2> names{
      {{PrivacySampling::kPoisson, "poisson"}, {PrivacySampling::kShuffle, "shuffle"}}};
};

/// pipeline.pii: what nss_synthesize does with the personal data of a table
/// (nss_prepare_data --pii, docs/data.md "Personal data").
enum class PiiHandling { kOff, kDetect, kReplace, kHash, kRedact };
template <>
struct ChoiceNames<PiiHandling> {
  static constexpr std::array<std::pair<PiiHandling, const char*>, 5> names{
      {{PiiHandling::kOff, "off"},
       {PiiHandling::kDetect, "detect"},
       {PiiHandling::kReplace, "replace"},
       {PiiHandling::kHash, "hash"},
       {PiiHandling::kRedact, "redact"}}};
};

/// pipeline.constrain: whether sampled records are held to the table's schema
/// (nss_generate --constrain).
enum class RecordConstraint { kSchema, kNone };
template <>
struct ChoiceNames<RecordConstraint> {
  static constexpr std::array<std::pair<RecordConstraint, const char*>, 2> names{
      {{RecordConstraint::kSchema, "schema"}, {RecordConstraint::kNone, "none"}}};
};

/// data.packing: how documents become training rows (docs/data.md).
enum class Packing { kWindows, kDocuments, kNone };
template <>
struct ChoiceNames<Packing> {
  static constexpr std::array<std::pair<Packing, const char*>, 3> names{
      {{Packing::kWindows, "windows"},
       {Packing::kDocuments, "documents"},
       {Packing::kNone, "none"}}};
};

/// data.long_documents: a document longer than a row, with packing.
enum class LongDocuments { kTruncate, kSplit };
template <>
struct ChoiceNames<LongDocuments> {
  static constexpr std::array<std::pair<LongDocuments, const char*>, 2> names{
      {{LongDocuments::kTruncate, "truncate"}, {LongDocuments::kSplit, "split"}}};
};

/// model.rope_scaling.type: Hugging Face's rope_type.
enum class RopeScaling { kNone, kLinear, kLlama3 };
template <>
struct ChoiceNames<RopeScaling> {
  static constexpr std::array<std::pair<RopeScaling, const char*>, 3> names{
      {{RopeScaling::kNone, "none"},
       {RopeScaling::kLinear, "linear"},
       {RopeScaling::kLlama3, "llama3"}}};
};

/// parallel.backend: the collectives' library.
enum class Backend { kAuto, kMpi, kNccl };
template <>
struct ChoiceNames<Backend> {
  static constexpr std::array<std::pair<Backend, const char*>, 3> names{
      {{Backend::kAuto, "auto"}, {Backend::kMpi, "mpi"}, {Backend::kNccl, "nccl"}}};
};

/// logging.level (spdlog's names).
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };
template <>
struct ChoiceNames<LogLevel> {
  static constexpr std::array<std::pair<LogLevel, const char*>, 5> names{
      {{LogLevel::kTrace, "trace"},
       {LogLevel::kDebug, "debug"},
       {LogLevel::kInfo, "info"},
       {LogLevel::kWarn, "warn"},
       {LogLevel::kError, "error"}}};
};

}  // namespace nss::config
