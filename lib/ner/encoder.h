// The forward pass of a post-norm transformer encoder with a token
// classifier (BERT, DistilBERT), in float32 on the CPU through BLAS: the
// logits transformers' *ForTokenClassification computes in eval mode. The
// linear layers run on every token of a batch of sequences at once, the
// attention per sequence, so a batch needs no padding.
#pragma once

#include <cstdint>
#include <vector>

#include "hf/safetensors_file.h"
#include "ner/encoder_config.h"

namespace nss::ner {

struct DenseWeights {
  std::vector<float> weight, bias;  // [out, in] as PyTorch stores it, [out]
  std::int64_t out = 0, in = 0;
};

struct NormWeights {
  std::vector<float> weight, bias;
};

class Encoder {
 public:
  /// Reads the tensors `config`'s family names from `weights` (F32, F16 or
  /// BF16, converted to float32). A missing tensor, a shape other than the
  /// config's, or a NaN is a DataError naming the file and the tensor;
  /// tensors the classifier does not use (a pooler) are ignored.
  static Encoder load(const EncoderConfig& config, const hf::SafetensorsFile& weights);

  /// Row-major logits [tokens, labels] of `sequences` laid end to end: each
  /// a non-empty list of ids below the vocabulary size and no longer than
  /// max_positions (InternalError otherwise).
  std::vector<float> logits(const std::vector<std::vector<std::int32_t>>& sequences) const;

  const EncoderConfig& config() const { return config_; }

 private:
  struct Layer {
    DenseWeights query, key, value, attention_output;
    NormWeights attention_norm;
    DenseWeights ffn_in, ffn_out;
    NormWeights output_norm;
  };

  void embed(const std::vector<std::vector<std::int32_t>>& sequences, std::vector<float>& x) const;
  void layer_forward(const Layer& layer, const std::vector<std::int64_t>& lengths,
                     std::vector<float>& x) const;
  void attention(const std::vector<float>& q, const std::vector<float>& k,
                 const std::vector<float>& v, const std::vector<std::int64_t>& lengths,
                 std::vector<float>& context) const;

  EncoderConfig config_;
  std::vector<float> word_embeddings_, position_embeddings_, token_type_embeddings_;
  NormWeights embeddings_norm_;
  std::vector<Layer> layers_;
  DenseWeights classifier_;
};

}  // namespace nss::ner
