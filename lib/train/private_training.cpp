#include "train/private_training.h"

#include "comm/agreement.h"
#include "core/error.h"

namespace nss::train {
namespace {

// The key's section: metadata.json secrets.privacy_key.
constexpr const char* kKeyField = "privacy_key";

}  // namespace

PrivateTraining::PrivateTraining(const config::Config& config, std::int64_t units,
                                 comm::Communicator& comm)
    : plan_(privacy::plan_privacy(config, units)), comm_(comm) {}

std::string PrivateTraining::name() const {
  return kKeyField;
}

void PrivateTraining::load(const std::optional<nlohmann::json>& saved) {
  if (saved) {
    if (!saved->is_string())
      throw CheckpointError("privacy", "the resumed step's metadata.json lacks secrets.privacy_key",
                            "the step was not saved by a private run of this nss_hpc; resume "
                            "another step or start fresh in another checkpoint.dir");
    key_ = privacy::SecretKey::from_hex(saved->get<std::string>());
  } else {
    std::string hex;
    comm::run_on_root(comm_, 0, [&] { hex = privacy::SecretKey::from_random_device().to_hex(); });
    comm::broadcast_text(comm_, hex, 0);
    key_ = privacy::SecretKey::from_hex(hex);
  }
  noise_key_ = key_->noise_key();
}

nlohmann::json PrivateTraining::state() const {
  NSS_ASSERT(key_.has_value(), "privacy", "the key is asked for before it was resolved");
  return key_->to_hex();
}

privacy::PoissonKey PrivateTraining::poisson_key() const {
  NSS_ASSERT(key_.has_value(), "privacy", "the key is asked for before it was resolved");
  return key_->poisson_key();
}

PrivateStepSettings PrivateTraining::step_settings(std::int64_t step, std::int64_t micro_steps,
                                                   double lr,
                                                   std::function<void()> before_update) const {
  PrivateStepSettings s;
  s.step = step;
  s.micro_steps = micro_steps;
  s.lr = lr;
  s.max_grad_norm = plan_.max_grad_norm;
  s.noise_multiplier = plan_.noise_multiplier;
  s.expected_batch = plan_.expected_batch;
  s.noise_key = &*noise_key_;
  s.before_update = std::move(before_update);
  return s;
}

}  // namespace nss::train
