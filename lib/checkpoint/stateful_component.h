// A part of training that saves its own state with every checkpoint and
// takes it back at a resume, so that the trainer does not carry it by hand.
// Each component owns one section of a step's metadata.json, under its name:
// a public section is state.<name>, beside the training state
// (training_state.h), and reports and exports copy it; a secret one is
// secrets.<name>, which only a resume reads, and makes metadata.json readable
// by its owner alone. The next component is one class and one
// TrainingCheckpoints::register_component call; save, load, commit and the
// exports know sections only as public or secret.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace nss::checkpoint {

class StatefulComponent {
 public:
  virtual ~StatefulComponent() = default;

  /// The section's name: state.<name>, or secrets.<name> when secret().
  virtual std::string name() const = 0;
  /// True for a section that no export or report may copy (a key).
  virtual bool secret() const { return false; }
  /// What a save keeps, asked on every rank before every save (rank 0's is
  /// written); null leaves the section out.
  virtual nlohmann::json state() const = 0;
  /// Takes what the resumed step holds, on every rank once the step is
  /// loaded, in registration order (so it may be collective): nothing on a
  /// fresh start, null when the step lacks the section (an older step).
  virtual void load(const std::optional<nlohmann::json>& saved) = 0;
  /// When a resume must match this public section: what a difference means. The
  /// step is then refused (exit 5) before any tensor is read when its
  /// section differs from state(). nullptr: any section resumes.
  virtual const char* resume_mismatch() const { return nullptr; }
};

/// Section `name` of a step's `sections` (its metadata.json "state" for a
/// public section, "secrets" for a secret one); null when the step lacks it.
inline nlohmann::json find_section(const nlohmann::json& sections, const std::string& name) {
  return sections.is_object() ? sections.value(name, nlohmann::json()) : nlohmann::json();
}

}  // namespace nss::checkpoint
