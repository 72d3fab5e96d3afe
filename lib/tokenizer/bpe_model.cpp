#include "tokenizer/bpe_model.h"

#include <queue>

#include "core/error.h"
#include "tokenizer/utf8.h"

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
  refuse_option(spec.value("byte_fallback", false), origin, "byte_fallback");
  refuse_option(!spec.value("continuing_subword_prefix", nlohmann::json()).is_null(), origin,
                "continuing_subword_prefix");
  refuse_option(!spec.value("end_of_word_suffix", nlohmann::json()).is_null(), origin,
                "end_of_word_suffix");
  model.fuse_unk_ = spec.value("fuse_unk", false);
  model.ignore_merges_ = spec.value("ignore_merges", false);

  for (const auto& [token, id_json] : spec.at("vocab").items()) {
    const int32_t id = id_json.get<int32_t>();
    if (id < 0) throw DataError("tokenizer", origin + ": token " + token + " has a negative id");
    model.vocab_[token] = id;
    if (static_cast<size_t>(id) >= model.tokens_.size()) {
      model.tokens_.resize(id + 1);
      model.has_token_.resize(id + 1, false);
    }
    model.tokens_[id] = token;
    model.has_token_[id] = true;
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
  const auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || id >= id_bound() || !has_token_[id]) return nullptr;
  return &tokens_[id];
}

std::optional<BpeModel::Merge> BpeModel::merge(int32_t left, int32_t right) const {
  const auto it = merges_.find(pair_key(left, right));
  if (it == merges_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::encode(std::string_view piece, std::vector<int32_t>& ids) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    if (const auto id = token_to_id(piece)) {
      ids.push_back(*id);
      return;
    }
  }
  std::vector<Symbol> symbols;
  bool previous_unknown = false;
  for (size_t pos = 0; pos < piece.size();) {
    const size_t start = pos;
    next_code_point(piece, pos);
    const auto id = token_to_id(piece.substr(start, pos - start));
    if (id) {
      previous_unknown = false;
    } else if (unk_id_) {
      if (fuse_unk_ && previous_unknown) {
        symbols.back().length += pos - start;
        continue;
      }
      previous_unknown = true;
    } else {
      continue;  // tokenizers drops a character it has no id for
    }
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id ? *id : *unk_id_, index - 1, index + 1, pos - start});
  }
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
