#include "glassbox/training_text.h"

#include "glassbox/error.h"

namespace glassbox {

TrainingDocument hold_out(std::vector<TrainingDocument>& docs, double fraction) {
  std::size_t total = 0;
  for (const auto& d : docs) total += d.text.size();
  std::size_t want = static_cast<std::size_t>(double(total) * fraction);
  std::string held;
  while (want > 0 && !docs.empty()) {
    std::string& t = docs.back().text;
    if (t.size() <= want) {   // the whole last document
      held = t + (held.empty() ? "" : "\n" + held);
      want -= t.size();
      docs.pop_back();
      continue;
    }
    std::size_t cut = t.rfind('\n', t.size() - want);
    if (cut != std::string::npos) {
      ++cut;
    } else {   // no line to cut at: the start of the next UTF-8 character (continuation bytes are 10xxxxxx)
      cut = t.size() - want;
      while (cut < t.size() && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) ++cut;
    }
    held = t.substr(cut) + (held.empty() ? "" : "\n" + held);
    t.resize(cut);
    break;
  }
  return {"(the last part of the training text)", held};
}

std::vector<std::int32_t> encode_documents(const Tokenizer& tokenizer, const std::vector<TrainingDocument>& docs) {
  std::vector<std::int32_t> ids;
  const auto eot = tokenizer.special_token("<|endoftext|>");
  for (const auto& d : docs) {
    if (d.text.empty()) continue;
    if (!ids.empty() && eot) ids.push_back(*eot);
    try {
      const auto part = tokenizer.encode(d.text);
      ids.insert(ids.end(), part.begin(), part.end());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(d.name + ": " + e.what());
    }
  }
  return ids;
}

}   // namespace glassbox
