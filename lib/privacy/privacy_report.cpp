#include "privacy/privacy_report.h"

#include <string>

#include "core/error.h"
#include "privacy/accountant.h"

namespace nss::privacy {
namespace {

template <class T>
T field(const nlohmann::json& settings, const char* name) {
  if (!settings.is_object() || !settings.contains(name))
    throw CheckpointError("privacy", std::string("state.privacy lacks ") + name,
                          "the step was not saved by a private run of this nss_hpc");
  try {
    return settings.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw CheckpointError("privacy", std::string("state.privacy.") + name + " has the wrong type",
                          "the step's metadata.json was edited or damaged");
  }
}

// PII handling decided from the data which columns are personal and how to
// transform them: the guarantee covers the training, not that decision.
std::string pii_classification(const nlohmann::json& dataset) {
  if (!dataset.is_object() || !dataset.contains("pii_mode") || !dataset["pii_mode"].is_string())
    return "";
  const std::string report = dataset.contains("pii_report") && dataset["pii_report"].is_string()
                                 ? ", report " + dataset["pii_report"].get<std::string>()
                                 : "";
  return "which columns and values nss_prepare_data --pii classified as personal data and how it "
         "transformed them (mode " +
         dataset["pii_mode"].get<std::string>() + report +
         "): the classification reads the training table; replacement hides those values, not "
         "the rows";
}

}  // namespace

nlohmann::json privacy_report(const nlohmann::json& settings, std::int64_t steps,
                              const nlohmann::json& dataset) {
  const AccountantKind kind = parse_accountant_kind(field<std::string>(settings, "accountant"));
  const double q = field<double>(settings, "sampling_rate");
  const double sigma = field<double>(settings, "noise_multiplier");
  const double delta = field<double>(settings, "delta");
  const std::string sampling = field<std::string>(settings, "sampling");
  const EpsilonBounds eps = epsilon_bounds(kind, q, sigma, steps, delta);
  nlohmann::json report = {
      {"mechanism",
       "DP-SGD: per-example gradient clipping, Gaussian noise, Poisson-subsampled batches"},
      {"epsilon", eps.upper},
      {"delta", delta},
      {"privacy_unit",
       "one example: one document of the training data (one group when it was prepared with "
       "--group-by)"},
      {"accountant", accountant_kind_name(kind)},
      {"epsilon_bounds", {{"lower", eps.lower}, {"estimate", eps.estimate}, {"upper", eps.upper}}},
      {"steps", steps},
      {"sampling", sampling},
      {"sampling_rate", q},
      {"units", field<std::int64_t>(settings, "units")},
      {"noise_multiplier", sigma},
      {"max_grad_norm", field<double>(settings, "max_grad_norm")},
      {"not_covered",
       {"the losses, target-token counts and gradient norms in metrics.jsonl and the logs",
        "validation scores",
        "the schema's column names, categories and longest values stored when the data was "
        "prepared (state.dataset), which bound the records nss_generate --constrain schema "
        "writes"}}};
  if (const std::string pii = pii_classification(dataset); !pii.empty())
    report["not_covered"].push_back(pii);
  if (sampling != "poisson")
    report["warning"] =
        "the run drew fixed-size shuffled batches (privacy.sampling: shuffle); epsilon is "
        "computed for Poisson sampling and is not a proven guarantee for this run";
  return report;
}

}  // namespace nss::privacy
