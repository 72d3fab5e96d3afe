// A token-classification encoder as config.json describes it: the family
// (BERT or DistilBERT — a description of its config keys and tensor names,
// so another post-norm encoder is a table row, not a branch), its sizes and
// its labels. What this implementation would compute differently from
// transformers (another architecture, position embedding type or
// activation) is a DataError naming the file, never a different model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nss::ner {

enum class Activation { kGelu, kGeluTanh, kRelu };

struct EncoderFamily {
  const char* model_type;    // config.json's model_type
  const char* architecture;  // the transformers class of its weights
  const char* prefix;        // of the encoder's tensor names: "bert."
  // config.json keys
  const char* hidden_key;
  const char* layers_key;
  const char* heads_key;
  const char* intermediate_key;
  const char* activation_key;
  const char* eps_key;  // nullptr: the family's fixed epsilon
  double fixed_eps;
  // tensor names after the prefix; token_type_embeddings nullptr: none
  const char* word_embeddings;
  const char* position_embeddings;
  const char* token_type_embeddings;
  const char* embeddings_norm;
  const char* layer;  // followed by the layer's index and "."
  const char* query;
  const char* key;
  const char* value;
  const char* attention_output;
  const char* attention_norm;
  const char* ffn_in;
  const char* ffn_out;
  const char* output_norm;
};

struct EncoderConfig {
  const EncoderFamily* family = nullptr;
  std::int64_t hidden = 0, layers = 0, heads = 0, intermediate = 0;
  std::int64_t max_positions = 0, vocab = 0, type_vocab = 0;
  double eps = 1e-12;
  Activation activation = Activation::kGelu;
  std::vector<std::string> labels;  // by id, from id2label
};

/// The families supported, for messages: "bert, distilbert".
std::string supported_model_types();

/// Parses config.json text; `origin` names the file in errors (DataError,
/// exit 4): an unknown model_type, an architecture that is not the family's
/// token-classification class, missing or non-positive sizes, hidden not
/// divisible by heads, an unsupported activation or position embedding type,
/// id2label not numbering its labels 0..n-1.
EncoderConfig parse_encoder_config(const std::string& json_text, const std::string& origin);

}  // namespace nss::ner
