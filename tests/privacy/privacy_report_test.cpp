// privacy.json's report: what the guarantee covers and what it does not,
// including the PII classification of a table prepared with nss_prepare_data
// --pii (decided from the data, outside the guarantee).
#include "privacy/privacy_report.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::privacy {
namespace {

nlohmann::json settings() {
  return {{"accountant", "rdp"}, {"sampling_rate", 0.01}, {"noise_multiplier", 1.1},
          {"delta", 1e-5},       {"sampling", "poisson"}, {"units", 1000},
          {"max_grad_norm", 1.0}};
}

TEST(PrivacyReport, NotCoveredListsThePiiClassificationWhenPiiHandlingRan) {
  const nlohmann::json plain = privacy_report(settings(), 100, nullptr);
  ASSERT_EQ(plain["not_covered"].size(), 3u);
  EXPECT_GT(plain["epsilon"].get<double>(), 0);
  const nlohmann::json dataset = {
      {"format", "records"}, {"pii_mode", "replace"}, {"pii_report", "/data/people.pii.json"}};
  const nlohmann::json with_pii = privacy_report(settings(), 100, dataset);
  ASSERT_EQ(with_pii["not_covered"].size(), 4u);
  const std::string item = with_pii["not_covered"][3];
  EXPECT_NE(item.find("classified as personal data"), std::string::npos) << item;
  EXPECT_NE(item.find("mode replace, report /data/people.pii.json"), std::string::npos) << item;
  EXPECT_EQ(with_pii["epsilon"], plain["epsilon"]);
  // Prepared without PII handling: nothing to add.
  EXPECT_EQ(privacy_report(settings(), 100, {{"format", "records"}})["not_covered"].size(), 3u);
}

TEST(PrivacyReport, MissingSettingIsACheckpointError) {
  nlohmann::json partial = settings();
  partial.erase("delta");
  EXPECT_THROW(privacy_report(partial, 100, nullptr), CheckpointError);
}

}  // namespace
}  // namespace nss::privacy
