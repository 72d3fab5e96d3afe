// RecordCollector keeps valid records in sample and line order until N, with
// the CSV of the table's columns and the same records as JSONL; invalid
// ones with their sample and reason, a record cut off by --max-new-tokens
// and an empty completion included. records_task rebuilds the training
// prompt from a step's state.dataset and refuses data of another format.
#include "generate/record_collector.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "generate/records_task.h"

namespace nss::generate {
namespace {

const char* kSchema = R"({"columns":[{"name":"name","type":"string","empty_cells":false},)"
                      R"({"name":"age","type":"number","empty_cells":true}]})";

TEST(RecordCollector, KeepsValidRecordsInOrderUntilTheNumberWanted) {
  RecordCollector records(RecordSchema::from_json(kSchema), 3);
  auto c =
      records.add(0, "{\"name\":\"Ada, L\",\"age\":36}\n{\"name\":\"Bo\",\"age\":\"x\"}", "eos");
  EXPECT_EQ(c.valid, 1);
  EXPECT_EQ(c.invalid, 1);
  c = records.add(1, "", "eos");
  EXPECT_EQ(c.invalid, 1);
  EXPECT_FALSE(records.done());
  c = records.add(
      2, "{\"age\":\"\",\"name\":\"Cy\"}\n{\"name\":\"Di\",\"age\":2}\n{\"name\":\"Ed\",\"age\":3}",
      "eos");
  EXPECT_EQ(c.valid, 2);  // the third valid record is beyond the 3 wanted
  EXPECT_TRUE(records.done());
  EXPECT_EQ(records.totals().valid, 3);
  EXPECT_EQ(records.totals().invalid, 2);
  EXPECT_EQ(records.samples(), 3);
  EXPECT_DOUBLE_EQ(records.valid_fraction(), 0.6);
  EXPECT_EQ(records.csv(), "name,age\n\"Ada, L\",36\nCy,\nDi,2\n");
  EXPECT_EQ(records.jsonl(),
            "{\"name\":\"Ada, L\",\"age\":36}\n{\"age\":\"\",\"name\":\"Cy\"}\n"
            "{\"name\":\"Di\",\"age\":2}\n");
  EXPECT_EQ(records.invalid_jsonl(),
            "{\"sample\":0,\"text\":\"{\\\"name\\\":\\\"Bo\\\",\\\"age\\\":\\\"x\\\"}\","
            "\"reason\":\"column age: \\\"x\\\" is not a number\"}\n"
            "{\"sample\":1,\"text\":\"\",\"reason\":\"the sample holds no record\"}\n");
}

TEST(RecordCollector, SaysWhenTheLastRecordWasCutOffByTheTokenLimit) {
  RecordCollector records(RecordSchema::from_json(kSchema), 5);
  records.add(4, "{\"name\":\"Ada\",\"age\":36}\n{\"name\":\"Bo\",\"a", "length");
  EXPECT_NE(records.invalid_jsonl().find("not valid JSON (cut off at --max-new-tokens"),
            std::string::npos)
      << records.invalid_jsonl();
  records.add(5, "{\"name\":\"Bo\",\"a", "eos");
  EXPECT_NE(records.invalid_jsonl().find("\"sample\":5,\"text\":\"{\\\"name\\\":\\\"Bo\\\",\\\"a\","
                                         "\"reason\":\"not valid JSON\"}"),
            std::string::npos)
      << records.invalid_jsonl();
}

nlohmann::json records_dataset() {
  return {{"format", "records"},
          {"prompt_template", "Rows of {columns} by {group_by}, {{ordered}} by {order_by}: "},
          {"group_by", "name"},
          {"order_by", "age"},
          {"records_schema", nlohmann::json::parse(kSchema)},
          {"bos_token_id", 256},
          {"eos_token_id", 257}};
}

TEST(RecordsTask, RebuildsTheTrainingPromptFromTheStepsRecord) {
  const RecordsTask task = records_task(records_dataset(), "step");
  EXPECT_EQ(task.prompt, "Rows of name, age by name, {ordered} by age: ");
  ASSERT_EQ(task.schema.columns.size(), 2u);
  EXPECT_TRUE(task.schema.columns[1].number);
  EXPECT_EQ(task.bos_token_id, 256);
  EXPECT_EQ(task.eos_token_id, 257);
}

TEST(RecordsTask, RefusesDataOfAnotherFormatOrAMalformedRecord) {
  try {
    records_task({{"format", "sft"}}, "runs/x/step_7");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("runs/x/step_7 was trained on 'sft' data"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(records_task(nlohmann::json(), "step"), UsageError);
  auto broken = records_dataset();
  broken.erase("records_schema");
  EXPECT_THROW(records_task(broken, "step"), DataError);
  broken = records_dataset();
  broken["prompt_template"] = "{unknown}";
  EXPECT_THROW(records_task(broken, "step"), UsageError);
}

}  // namespace
}  // namespace nss::generate
