#include "ner/encoder.h"

#include <algorithm>
#include <cblas.h>
#include <cmath>

#include "core/error.h"

namespace nss::ner {
namespace {

constexpr const char* kComponent = "ner";

// Reads tensors of one file, checking each shape against the config's.
class TensorReader {
 public:
  explicit TensorReader(const hf::SafetensorsFile& file) : file_(file) {}

  std::vector<float> read(const std::string& name, const std::vector<std::int64_t>& shape) const {
    const hf::SafetensorsTensor& tensor = file_.tensor(name);
    if (tensor.shape != shape)
      throw DataError(kComponent,
                      file_.path() + ": tensor " + name + " has shape " + text(tensor.shape) +
                          ", the config says " + text(shape),
                      "give the model.safetensors saved with this config.json");
    std::int64_t count = 1;
    for (const std::int64_t d : shape) count *= d;
    std::vector<float> out(static_cast<std::size_t>(count));
    file_.read_float32(name, 0, count, out.data());
    return out;
  }

  // Checkpoints from older transformers name LayerNorm parameters gamma and
  // beta; transformers renames them when it loads, and so does this.
  std::vector<float> read_norm(const std::string& name, const char* current, const char* legacy,
                               std::int64_t size) const {
    const std::string modern = name + "." + current;
    return read(file_.find(modern) ? modern : name + "." + legacy, {size});
  }

 private:
  static std::string text(const std::vector<std::int64_t>& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
      out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
  }

  const hf::SafetensorsFile& file_;
};

// y[rows, out] = x[rows, in] * weight^T + bias
void linear(const DenseWeights& layer, const std::vector<float>& x, std::int64_t rows,
            std::vector<float>& y) {
  y.resize(static_cast<std::size_t>(rows * layer.out));
  for (std::int64_t r = 0; r < rows; ++r)
    std::copy(layer.bias.begin(), layer.bias.end(), y.begin() + r * layer.out);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
              static_cast<int>(layer.out), static_cast<int>(layer.in), 1.0f, x.data(),
              static_cast<int>(layer.in), layer.weight.data(), static_cast<int>(layer.in), 1.0f,
              y.data(), static_cast<int>(layer.out));
}

// x = LayerNorm(x + residual) row by row, accumulated in double.
void add_and_norm(std::vector<float>& x, const std::vector<float>* residual,
                  const NormWeights& norm, std::int64_t width, double eps) {
  const std::int64_t rows = static_cast<std::int64_t>(x.size()) / width;
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x.data() + r * width;
    if (residual)
      for (std::int64_t i = 0; i < width; ++i) row[i] += (*residual)[r * width + i];
    double mean = 0, var = 0;
    for (std::int64_t i = 0; i < width; ++i) mean += row[i];
    mean /= static_cast<double>(width);
    for (std::int64_t i = 0; i < width; ++i) var += (row[i] - mean) * (row[i] - mean);
    const double scale = 1.0 / std::sqrt(var / static_cast<double>(width) + eps);
    for (std::int64_t i = 0; i < width; ++i)
      row[i] = static_cast<float>((row[i] - mean) * scale) * norm.weight[i] + norm.bias[i];
  }
}

void activate(std::vector<float>& x, Activation activation) {
  constexpr float kSqrtHalf = 0.70710678118654752f, kSqrtTwoOverPi = 0.79788456080286536f;
  for (float& v : x) switch (activation) {
      case Activation::kGelu:
        v = 0.5f * v * (1.0f + std::erf(v * kSqrtHalf));
        break;
      case Activation::kGeluTanh:
        v = 0.5f * v * (1.0f + std::tanh(kSqrtTwoOverPi * (v + 0.044715f * v * v * v)));
        break;
      case Activation::kRelu:
        v = std::max(v, 0.0f);
        break;
    }
}

}  // namespace

Encoder Encoder::load(const EncoderConfig& config, const hf::SafetensorsFile& weights) {
  const TensorReader reader(weights);
  const EncoderFamily& family = *config.family;
  const std::string prefix = family.prefix;
  const std::int64_t h = config.hidden;
  auto linear_of = [&](const std::string& name, std::int64_t out, std::int64_t in) {
    return DenseWeights{reader.read(name + ".weight", {out, in}),
                        reader.read(name + ".bias", {out}), out, in};
  };
  auto norm_of = [&](const std::string& name) {
    return NormWeights{reader.read_norm(name, "weight", "gamma", h),
                       reader.read_norm(name, "bias", "beta", h)};
  };
  Encoder encoder;
  encoder.config_ = config;
  encoder.word_embeddings_ =
      reader.read(prefix + family.word_embeddings + ".weight", {config.vocab, h});
  encoder.position_embeddings_ =
      reader.read(prefix + family.position_embeddings + ".weight", {config.max_positions, h});
  if (family.token_type_embeddings)
    encoder.token_type_embeddings_ =
        reader.read(prefix + family.token_type_embeddings + ".weight", {config.type_vocab, h});
  encoder.embeddings_norm_ = norm_of(prefix + family.embeddings_norm);
  for (std::int64_t i = 0; i < config.layers; ++i) {
    const std::string at = prefix + family.layer + std::to_string(i) + ".";
    encoder.layers_.push_back(Layer{
        linear_of(at + family.query, h, h), linear_of(at + family.key, h, h),
        linear_of(at + family.value, h, h), linear_of(at + family.attention_output, h, h),
        norm_of(at + family.attention_norm), linear_of(at + family.ffn_in, config.intermediate, h),
        linear_of(at + family.ffn_out, h, config.intermediate), norm_of(at + family.output_norm)});
  }
  encoder.classifier_ = linear_of("classifier", static_cast<std::int64_t>(config.labels.size()), h);
  return encoder;
}

void Encoder::embed(const std::vector<std::vector<std::int32_t>>& sequences,
                    std::vector<float>& x) const {
  const std::int64_t h = config_.hidden;
  std::size_t row = 0;
  for (const auto& sequence : sequences) {
    if (sequence.empty() || static_cast<std::int64_t>(sequence.size()) > config_.max_positions)
      throw InternalError(kComponent, "a sequence of " + std::to_string(sequence.size()) +
                                          " tokens for an encoder of " +
                                          std::to_string(config_.max_positions) + " positions");
    for (std::size_t p = 0; p < sequence.size(); ++p, ++row) {
      const std::int32_t id = sequence[p];
      if (id < 0 || id >= config_.vocab)
        throw InternalError(kComponent,
                            "token id " + std::to_string(id) + " outside the vocabulary");
      float* out = x.data() + row * h;
      const float* word = word_embeddings_.data() + id * h;
      const float* position = position_embeddings_.data() + static_cast<std::int64_t>(p) * h;
      for (std::int64_t i = 0; i < h; ++i) out[i] = word[i] + position[i];
      if (!token_type_embeddings_.empty())  // every token is of the first segment
        for (std::int64_t i = 0; i < h; ++i) out[i] += token_type_embeddings_[i];
    }
  }
  add_and_norm(x, nullptr, embeddings_norm_, h, config_.eps);
}

void Encoder::attention(const std::vector<float>& q, const std::vector<float>& k,
                        const std::vector<float>& v, const std::vector<std::int64_t>& lengths,
                        std::vector<float>& context) const {
  const std::int64_t h = config_.hidden, d = h / config_.heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  context.assign(q.size(), 0.0f);
  std::vector<float> scores;
  std::int64_t first = 0;
  for (const std::int64_t n : lengths) {
    scores.resize(static_cast<std::size_t>(n * n));
    for (std::int64_t head = 0; head < config_.heads; ++head) {
      const std::int64_t at = first * h + head * d;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(n),
                  static_cast<int>(d), scale, q.data() + at, static_cast<int>(h), k.data() + at,
                  static_cast<int>(h), 0.0f, scores.data(), static_cast<int>(n));
      for (std::int64_t r = 0; r < n; ++r) {
        float* row = scores.data() + r * n;
        const float top = *std::max_element(row, row + n);
        double sum = 0;
        for (std::int64_t c = 0; c < n; ++c) sum += (row[c] = std::exp(row[c] - top));
        for (std::int64_t c = 0; c < n; ++c) row[c] = static_cast<float>(row[c] / sum);
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                  static_cast<int>(d), static_cast<int>(n), 1.0f, scores.data(),
                  static_cast<int>(n), v.data() + at, static_cast<int>(h), 0.0f,
                  context.data() + at, static_cast<int>(h));
    }
    first += n;
  }
}

void Encoder::layer_forward(const Layer& layer, const std::vector<std::int64_t>& lengths,
                            std::vector<float>& x) const {
  const std::int64_t h = config_.hidden;
  const std::int64_t rows = static_cast<std::int64_t>(x.size()) / h;
  std::vector<float> q, k, v, context, attended, inner, out;
  linear(layer.query, x, rows, q);
  linear(layer.key, x, rows, k);
  linear(layer.value, x, rows, v);
  attention(q, k, v, lengths, context);
  linear(layer.attention_output, context, rows, attended);
  add_and_norm(attended, &x, layer.attention_norm, h, config_.eps);
  linear(layer.ffn_in, attended, rows, inner);
  activate(inner, config_.activation);
  linear(layer.ffn_out, inner, rows, out);
  add_and_norm(out, &attended, layer.output_norm, h, config_.eps);
  x = std::move(out);
}

std::vector<float> Encoder::logits(const std::vector<std::vector<std::int32_t>>& sequences) const {
  std::vector<std::int64_t> lengths;
  std::int64_t tokens = 0;
  for (const auto& sequence : sequences) {
    lengths.push_back(static_cast<std::int64_t>(sequence.size()));
    tokens += lengths.back();
  }
  std::vector<float> x(static_cast<std::size_t>(tokens * config_.hidden));
  embed(sequences, x);
  for (const Layer& layer : layers_) layer_forward(layer, lengths, x);
  std::vector<float> out;
  linear(classifier_, x, tokens, out);
  return out;
}

}  // namespace nss::ner
