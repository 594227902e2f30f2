// The texts a model trains on, prepared the same way by `glassbox train` and by the JS API's
// train(): the held-out part cut from the end before anything is learned, and the documents
// joined into one stream of token ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"

namespace glassbox {

struct TrainingDocument {
  std::string name;   // where it came from, for messages (a file's path, "text 2")
  std::string text;
};

// Cuts the last `fraction` of the documents' bytes off as one held-out document (at the start of
// a line where the cut falls inside a document, else of a UTF-8 character; whole documents from
// the end first), so that
// nothing of it is seen in training, the vocabulary included. docs keeps the rest.
TrainingDocument hold_out(std::vector<TrainingDocument>& docs, double fraction);

// The documents as one stream of ids, <|endoftext|> between two of them where the tokenizer has
// it; empty documents are skipped. Throws InvalidArgument naming the document a text cannot be
// encoded from (not UTF-8).
std::vector<std::int32_t> encode_documents(const Tokenizer& tokenizer, const std::vector<TrainingDocument>& docs);

}   // namespace glassbox
