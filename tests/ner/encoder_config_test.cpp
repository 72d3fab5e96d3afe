#include "ner/encoder_config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nss::ner {
namespace {

nlohmann::json bert() {
  return {{"model_type", "bert"},
          {"architectures", {"BertForTokenClassification"}},
          {"hidden_size", 32},
          {"num_hidden_layers", 2},
          {"num_attention_heads", 4},
          {"intermediate_size", 64},
          {"max_position_embeddings", 64},
          {"vocab_size", 100},
          {"type_vocab_size", 2},
          {"id2label", {{"0", "O"}, {"1", "B-PER"}, {"2", "I-PER"}}}};
}

std::string message_of(const nlohmann::json& json) {
  try {
    parse_encoder_config(json.dump(), "m/config.json");
  } catch (const DataError& e) {
    return e.message();
  }
  return "accepted";
}

TEST(EncoderConfigTest, ReadsBertWithTransformersDefaults) {
  const EncoderConfig config = parse_encoder_config(bert().dump(), "m/config.json");
  EXPECT_STREQ(config.family->model_type, "bert");
  EXPECT_EQ(config.hidden, 32);
  EXPECT_EQ(config.layers, 2);
  EXPECT_EQ(config.type_vocab, 2);
  EXPECT_DOUBLE_EQ(config.eps, 1e-12);
  EXPECT_EQ(config.activation, Activation::kGelu);
  EXPECT_EQ(config.labels, (std::vector<std::string>{"O", "B-PER", "I-PER"}));
}

TEST(EncoderConfigTest, ReadsDistilBertKeys) {
  const nlohmann::json json = {{"model_type", "distilbert"},
                               {"dim", 16},
                               {"n_layers", 1},
                               {"n_heads", 2},
                               {"hidden_dim", 32},
                               {"activation", "relu"},
                               {"max_position_embeddings", 8},
                               {"vocab_size", 10},
                               {"id2label", {{"1", "LOC"}, {"0", "O"}}}};
  const EncoderConfig config = parse_encoder_config(json.dump(), "d/config.json");
  EXPECT_STREQ(config.family->prefix, "distilbert.");
  EXPECT_EQ(config.intermediate, 32);
  EXPECT_EQ(config.activation, Activation::kRelu);
  EXPECT_EQ(config.type_vocab, 0);  // no token types
  EXPECT_EQ(config.labels, (std::vector<std::string>{"O", "LOC"}));
}

TEST(EncoderConfigTest, RefusesWhatItWouldComputeDifferently) {
  auto with = [](const char* key, nlohmann::json value) {
    nlohmann::json json = bert();
    json[key] = std::move(value);
    return json;
  };
  EXPECT_NE(message_of(with("model_type", "llama")).find("supported: bert, distilbert"),
            std::string::npos);
  EXPECT_NE(message_of(with("architectures", {"BertForMaskedLM"})).find("not a token classifier"),
            std::string::npos);
  EXPECT_NE(message_of(with("hidden_act", "silu")).find("\"hidden_act\": \"silu\""),
            std::string::npos);
  EXPECT_NE(message_of(with("position_embedding_type", "relative_key")).find("relative_key"),
            std::string::npos);
  EXPECT_NE(message_of(with("num_attention_heads", 5)).find("not divisible"), std::string::npos);
  EXPECT_NE(message_of(with("hidden_size", -32)).find("\"hidden_size\" must be a positive"),
            std::string::npos);
  EXPECT_NE(message_of(with("hidden_size", "32")).find("positive integer"), std::string::npos);
  EXPECT_NE(message_of(with("hidden_act", 3)).find("wrong type"), std::string::npos);
  EXPECT_NE(message_of(with("id2label", {{"0", "O"}, {"2", "PER"}})).find("0..1"),
            std::string::npos);
  EXPECT_NE(message_of(with("id2label", {{"x", "O"}})).find("id2label"), std::string::npos);
  EXPECT_NE(message_of(with("id2label", nlohmann::json::object())).find("missing"),
            std::string::npos);
  EXPECT_THROW(parse_encoder_config("{", "m/config.json"), DataError);
  EXPECT_THROW(parse_encoder_config("[1]", "m/config.json"), DataError);
}

}  // namespace
}  // namespace nss::ner
