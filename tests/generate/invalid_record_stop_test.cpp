// The early stop over the running invalid fraction, with patience.
#include "generate/invalid_record_stop.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::generate {
namespace {

TEST(InvalidRecordStop, StopsAtTheFirstBatchAboveTheThresholdWithPatienceOne) {
  InvalidRecordStop stop(0.8, 1);
  EXPECT_FALSE(stop.after_batch(5, 5));   // 0.5
  EXPECT_FALSE(stop.after_batch(0, 10));  // 15 / 20 = 0.75
  EXPECT_TRUE(stop.after_batch(0, 20));   // 35 / 40 = 0.875
  EXPECT_DOUBLE_EQ(stop.invalid_fraction(), 35.0 / 40.0);
}

TEST(InvalidRecordStop, PatienceNeedsConsecutiveBatchesAbove) {
  InvalidRecordStop stop(0.5, 2);
  EXPECT_FALSE(stop.after_batch(0, 4));  // 1.0: one batch above
  EXPECT_FALSE(stop.after_batch(8, 0));  // 4 / 12: below, the count restarts
  EXPECT_FALSE(stop.after_batch(0, 6));  // 10 / 18 > 0.5: one
  EXPECT_TRUE(stop.after_batch(0, 2));   // 12 / 20 > 0.5: two in a row
  EXPECT_EQ(stop.valid(), 8);
  EXPECT_EQ(stop.invalid(), 12);
}

TEST(InvalidRecordStop, AllValidNeverStopsAndBadSettingsAreRefused) {
  InvalidRecordStop stop(0.0, 1);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(stop.after_batch(3, 0));
  EXPECT_THROW(InvalidRecordStop(1.5, 1), UsageError);
  EXPECT_THROW(InvalidRecordStop(-0.1, 1), UsageError);
  EXPECT_THROW(InvalidRecordStop(0.8, 0), UsageError);
}

}  // namespace
}  // namespace nss::generate
