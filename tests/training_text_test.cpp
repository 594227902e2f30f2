// hold_out and encode_documents (glassbox/training_text.h): what `glassbox train` and the JS API's
// train() hold out and train on.
#include <gtest/gtest.h>

#include "glassbox/training_text.h"

namespace glassbox {
namespace {

TEST(TrainingText, HoldOutCutsAtALineOrElseAtACharacter) {
  std::vector<TrainingDocument> docs = {{"a", "first document\n"}, {"b", "one\ntwo\nthree\n"}};
  TrainingDocument held = hold_out(docs, 0.2);   // 29 bytes: 5 wanted, from the line starting before them
  EXPECT_EQ(held.text, "three\n");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1].text, "one\ntwo\n");

  docs = {{"a", "first"}, {"b", "second"}};   // more than the last document: all of it, and a cut in the one before
  held = hold_out(docs, 0.8);
  EXPECT_EQ(held.text, "st\nsecond");   // 8 of 11 bytes: "second", then 2 of "first"
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].text, "fir");

  // No line to cut at: never inside a character (é is 2 bytes; a cut at 1801 of 2001 would split one).
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xC3\xA9";
  docs = {{"a", text + "a"}};
  held = hold_out(docs, 0.1);
  EXPECT_EQ(held.text.size() % 2, 1u);   // whole characters, then "a"
  EXPECT_EQ(static_cast<unsigned char>(held.text[0]), 0xC3);
  EXPECT_EQ(docs[0].text.size() + held.text.size(), 2001u);
}

}   // namespace
}   // namespace glassbox
