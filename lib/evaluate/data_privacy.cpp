#include "evaluate/data_privacy.h"

#include "evaluate/attribute_inference.h"
#include "evaluate/membership_inference.h"
#include "evaluate/memorized_rows.h"
#include "evaluate/privacy_metrics.h"
#include "evaluate/reference_random.h"

namespace nss::evaluate {
namespace {

// Seeds numpy's global RandomState before the attribute inference reseeds
// it with 5. NSS leaves it OS-seeded, which only matters when that attack
// stops before seeding (a single column) and the membership attack then
// needs a quantile subsample (more than 10000 rows): NSS is not
// reproducible there, nss_evaluate uses RandomState(5) unshuffled.
constexpr std::uint32_t kUnseededGlobalStandIn = 5;

}  // namespace

Score data_privacy_score(const Score& attribute, const Score& membership) {
  double total = 0;
  int counted = 0;
  for (const Score* component : {&attribute, &membership}) {
    if (!component->available() || *component->score == 0.0) continue;
    total += *component->score;
    ++counted;
  }
  if (counted == 0) return unavailable();
  const double mean = total / counted;
  return finalize(mean, mean);
}

void measure_privacy(const EvaluationTables& tables, EvaluationResult& result, unsigned threads) {
  result.statistics = dataset_statistics(tables);
  LegacyRandom numpy_global(kUnseededGlobalStandIn);
  result.attribute = measure_attribute_inference(tables, numpy_global);
  result.membership = measure_membership_inference(tables, numpy_global, threads);
  result.privacy = data_privacy_score(result.attribute.score, result.membership.score);
  result.pii_replay = unavailable(
      "PII Replay needs the PII detection of nss_prepare_data --pii; nss_evaluate has no "
      "detected entities to look for");
}

}  // namespace nss::evaluate
