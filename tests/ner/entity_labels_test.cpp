#include "ner/entity_labels.h"

#include <gtest/gtest.h>

namespace nss::ner {
namespace {

TEST(EntityLabelsTest, TagsAsThePipelineReadsThem) {
  EXPECT_TRUE(label_tag("B-PER").begins);
  EXPECT_EQ(label_tag("B-PER").group, "PER");
  EXPECT_FALSE(label_tag("I-LOC").begins);
  EXPECT_EQ(label_tag("I-LOC").group, "LOC");
  EXPECT_FALSE(label_tag("PERSON").begins);
  EXPECT_EQ(label_tag("PERSON").group, "PERSON");
  EXPECT_EQ(label_tag("O").group, "O");
  EXPECT_EQ(label_tag("B-").group, "B-");  // no group after the prefix: the label itself
}

TEST(EntityLabelsTest, PeopleArePlacesAndEntityNamesMapOthersDoNot) {
  EXPECT_EQ(entity_of_group("PER"), pii::Entity::kName);
  EXPECT_EQ(entity_of_group("person"), pii::Entity::kName);
  EXPECT_EQ(entity_of_group("LOC"), pii::Entity::kCity);
  EXPECT_EQ(entity_of_group("GPE"), pii::Entity::kCity);
  EXPECT_EQ(entity_of_group("EMAIL"), pii::Entity::kEmail);
  EXPECT_EQ(entity_of_group("street_address"), pii::Entity::kStreetAddress);
  EXPECT_EQ(entity_of_group("ORG"), std::nullopt);
  EXPECT_EQ(entity_of_group("MISC"), std::nullopt);
  EXPECT_EQ(entity_of_group("O"), std::nullopt);
}

}  // namespace
}  // namespace nss::ner
