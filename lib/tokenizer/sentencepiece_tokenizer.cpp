#include "tokenizer/sentencepiece_tokenizer.h"

#include <filesystem>
#include <sentencepiece_processor.h>

#include "core/error.h"

namespace nss::tokenizer {

SentencePieceTokenizer SentencePieceTokenizer::from_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw DataError("tokenizer", path + " is not a regular file",
                    "give a SentencePiece tokenizer.model or a tokenizer.json");
  auto processor = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->Load(path);
  if (!status.ok())
    throw DataError("tokenizer", path + " is not a SentencePiece model: " + status.ToString(),
                    "give a SentencePiece tokenizer.model or a tokenizer.json");
  return SentencePieceTokenizer(std::move(processor));
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text,
                                                    bool add_special_tokens) const {
  std::vector<int> pieces;
  const auto status = processor_->Encode(text, &pieces);
  if (!status.ok())
    throw DataError("tokenizer", "SentencePiece could not encode a text: " + status.ToString());
  std::vector<int32_t> ids;
  ids.reserve(pieces.size() + 1);
  if (add_special_tokens && processor_->bos_id() >= 0) ids.push_back(processor_->bos_id());
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  return ids;
}

std::string SentencePieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::vector<int> known;
  for (const int32_t id : ids)
    if (id >= 0 && id < processor_->GetPieceSize()) known.push_back(id);
  std::string text;
  const auto status = processor_->Decode(known, &text);
  if (!status.ok())
    throw DataError("tokenizer", "SentencePiece could not decode ids: " + status.ToString());
  return text;
}

int32_t SentencePieceTokenizer::vocab_size() const {
  return processor_->GetPieceSize();
}

std::optional<int32_t> SentencePieceTokenizer::token_to_id(std::string_view piece) const {
  const int id = processor_->PieceToId(piece);
  // PieceToId answers unk for a piece it does not have.
  if (id == processor_->unk_id() && processor_->IdToPiece(id) != piece) return std::nullopt;
  return id;
}

int32_t SentencePieceTokenizer::bos_id() const {
  return processor_->bos_id();
}

int32_t SentencePieceTokenizer::eos_id() const {
  return processor_->eos_id();
}

}  // namespace nss::tokenizer
