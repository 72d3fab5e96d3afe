#include "tokenizer/bpe_model.h"

#include <queue>

#include "core/error.h"
#include "core/utf8.h"

namespace nss::tokenizer {
namespace {

// Merges are "a b" strings (older files) or [a, b] pairs (tokenizers >= 0.20).
std::pair<std::string, std::string> merge_parts(const nlohmann::json& merge,
                                                const std::string& origin) {
  if (merge.is_array() && merge.size() == 2) {
    return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  }
  if (merge.is_string()) {
    const std::string text = merge.get<std::string>();
    const size_t space = text.find(' ');
    if (space != std::string::npos && text.find(' ', space + 1) == std::string::npos) {
      return {text.substr(0, space), text.substr(space + 1)};
    }
  }
  throw DataError("tokenizer",
                  origin + ": merge " + merge.dump() + " is neither \"a b\" nor [\"a\", \"b\"]");
}

void refuse_option(bool present, const std::string& origin, const std::string& option) {
  if (present) {
    throw DataError("tokenizer", origin + ": BPE option " + option + " is not supported",
                    "prepare the data with scripts/prepare_data_hf.py instead");
  }
}

// The symbols of a word, a doubly linked list in an array, as tokenizers'
// Word: merged-away symbols keep length 0.
struct Symbol {
  int32_t id;
  int prev, next;
  size_t length;
};

struct QueuedMerge {
  int32_t rank;
  int pos;
  int32_t id;
  // std::priority_queue is a max-heap: the lowest rank, then the leftmost
  // position, must compare greatest.
  bool operator<(const QueuedMerge& other) const {
    return rank != other.rank ? rank > other.rank : pos > other.pos;
  }
};

}  // namespace

BpeModel BpeModel::from_json(const nlohmann::json& spec, const std::string& origin) {
  BpeModel model;
  const auto dropout = spec.value("dropout", nlohmann::json());
  refuse_option(!dropout.is_null() && dropout.get<double>() != 0.0, origin, "dropout");
  model.byte_fallback_ = spec.value("byte_fallback", false);
  // Converters write "" for "none" (Qwen2's); only a real affix changes ids.
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const auto value = spec.value(affix, nlohmann::json());
    refuse_option(!value.is_null() && !(value.is_string() && value.get<std::string>().empty()),
                  origin, affix);
  }
  model.fuse_unk_ = spec.value("fuse_unk", false);
  model.ignore_merges_ = spec.value("ignore_merges", false);

  model.vocab_ = Vocabulary::from_json(spec.at("vocab"), origin);
  for (const auto& entry : model.vocab_.entries()) model.note_adjacent_characters(entry.first);
  // Byte fallback's tokens, "<0x0A>" as Rust's format!("<{:#04X}>") spells them.
  model.byte_ids_.fill(-1);
  for (int byte = 0; byte < 256; ++byte) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const std::string name = std::string("<0x") + kHex[byte / 16] + kHex[byte % 16] + ">";
    if (const auto id = model.token_to_id(name)) model.byte_ids_[byte] = *id;
  }
  const auto unk = spec.value("unk_token", nlohmann::json());
  if (!unk.is_null()) {
    // tokenizers fails on an unknown character whose unk token is missing;
    // failing here says so up front.
    const auto id = model.token_to_id(unk.get<std::string>());
    if (!id)
      throw DataError("tokenizer", origin + ": unk_token " + unk.dump() + " is not in vocab");
    model.unk_id_ = id;
  }

  int32_t rank = 0;
  for (const auto& merge : spec.at("merges")) {
    const auto [left, right] = merge_parts(merge, origin);
    const auto left_id = model.token_to_id(left), right_id = model.token_to_id(right),
               id = model.token_to_id(left + right);
    if (!left_id || !right_id || !id) {
      throw DataError("tokenizer", origin + ": merge " + merge.dump() +
                                       " uses or makes a token outside the vocabulary");
    }
    // A repeated merge keeps its last rank, as tokenizers' map does.
    model.merges_[pair_key(*left_id, *right_id)] = Merge{rank++, *id};
  }
  return model;
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  return vocab_.find(token);
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  return vocab_.token(id);
}

template <typename Add>
bool BpeModel::add_fallback_bytes(std::string_view character, const Add& add) const {
  int32_t ids[4];
  for (size_t i = 0; i < character.size(); ++i) {
    const auto id = byte_ids_[static_cast<unsigned char>(character[i])];
    if (id < 0) return false;
    ids[i] = id;
  }
  for (size_t i = 0; i < character.size(); ++i) add(ids[i], 1);
  return true;
}

std::optional<BpeModel::Merge> BpeModel::merge(int32_t left, int32_t right) const {
  const auto it = merges_.find(pair_key(left, right));
  if (it == merges_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::note_adjacent_characters(const std::string& token) {
  char32_t previous = 0;
  for (size_t pos = 0; pos < token.size();) {
    const size_t start = pos;
    const char32_t cp = next_code_point(token, pos);
    if (start > 0)
      adjacent_.insert(pair_key(static_cast<int32_t>(previous), static_cast<int32_t>(cp)));
    previous = cp;
  }
}

void BpeModel::encode(std::string_view piece, std::vector<int32_t>& ids) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    if (const auto id = token_to_id(piece)) {
      ids.push_back(*id);
      return;
    }
  }
  if (piece.size() < kLongPiece) {
    encode_word(piece, ids);
    return;
  }
  // A long piece (a whole text without pre-tokenizer, as SentencePiece-style
  // files have) is cut between two characters of the vocabulary that no
  // token has side by side: no merge can join them, so the parts' merges are
  // the whole's, and each part's queue stays small.
  size_t begin = 0;
  char32_t previous = 0;
  bool previous_known = false;
  for (size_t pos = 0; pos < piece.size();) {
    const size_t start = pos;
    const char32_t cp = next_code_point(piece, pos);
    const bool known = token_to_id(piece.substr(start, pos - start)).has_value();
    if (start > 0 && known && previous_known &&
        !adjacent_.count(pair_key(static_cast<int32_t>(previous), static_cast<int32_t>(cp)))) {
      encode_word(piece.substr(begin, start - begin), ids);
      begin = start;
    }
    previous = cp;
    previous_known = known;
  }
  encode_word(piece.substr(begin), ids);
}

void BpeModel::encode_word(std::string_view piece, std::vector<int32_t>& ids) const {
  std::vector<Symbol> symbols;
  const auto add = [&symbols](int32_t id, size_t length) {
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, index - 1, index + 1, length});
  };
  // An unknown character waits until the next known one (or the end), so
  // that unknown neighbours can fuse; byte-fallback tokens do not flush it,
  // exactly as tokenizers' merge_word orders them.
  struct {
    int32_t id = 0;
    size_t length = 0;
    bool pending = false;
  } unknown;
  for (size_t pos = 0; pos < piece.size();) {
    const size_t start = pos;
    next_code_point(piece, pos);
    const std::string_view character = piece.substr(start, pos - start);
    if (const auto id = token_to_id(character)) {
      if (unknown.pending) add(unknown.id, unknown.length);
      unknown.pending = false;
      add(*id, character.size());
      continue;
    }
    if (byte_fallback_ && add_fallback_bytes(character, add)) continue;
    if (!unk_id_) continue;  // tokenizers drops a character it has no id for
    if (unknown.pending && fuse_unk_) {
      unknown.length += character.size();
      continue;
    }
    if (unknown.pending) add(unknown.id, unknown.length);
    unknown = {*unk_id_, character.size(), true};
  }
  if (unknown.pending) add(unknown.id, unknown.length);
  if (!symbols.empty()) symbols.back().next = -1;

  std::priority_queue<QueuedMerge> queue;
  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const auto m = merge(symbols[i].id, symbols[i + 1].id)) {
      queue.push({m->rank, static_cast<int>(i), m->id});
    }
  }
  while (!queue.empty()) {
    const QueuedMerge top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.length == 0 || left.next < 0) continue;
    const Symbol right = symbols[left.next];
    // A stale entry: one side has changed since it was queued.
    const auto current = merge(left.id, right.id);
    if (!current || current->id != top.id) continue;
    symbols[left.next].length = 0;
    left.id = top.id;
    left.length += right.length;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) {
      if (const auto m = merge(symbols[left.prev].id, left.id)) {
        queue.push({m->rank, left.prev, m->id});
      }
    }
    if (left.next >= 0) {
      if (const auto m = merge(left.id, symbols[left.next].id)) {
        queue.push({m->rank, top.pos, m->id});
      }
    }
  }
  for (const auto& symbol : symbols) {
    if (symbol.length != 0) ids.push_back(symbol.id);
  }
}

}  // namespace nss::tokenizer
