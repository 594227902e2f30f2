// The bad-input table (docs/bad-input.md), C++ API and CLI columns of the rows about names a
// message quotes from config.json: UTF-8 kept whole (not read byte by byte), control characters
// escaped (a NUL would end the C string a message is). The JS API's column of the same rows:
// tests/js/bad-input-api.test.mjs.
#include <gtest/gtest.h>

#include <string>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "bad_input_table.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::BrokenModel;
using test::edit_config;
using test::expect_cli;
using test::expect_cpp;

TEST(BadInput, B60_NonAsciiNameInAMessage) {
  BrokenModel m([](const auto& dir) { edit_config(dir, "model_type", "ll\xC3\xA4ma"); });
  expect_cli("B60", {"forward", "-m", m.path(), "--tokens", "1"});
  expect_cpp<ModelFormatError>("B60", [&] { Model::load(m.path()); });
}

TEST(BadInput, B65_NulInANameInAMessage) {
  BrokenModel m([](const auto& dir) { edit_config(dir, "model_type", std::string("ll\0ama", 6)); });
  expect_cli("B65", {"forward", "-m", m.path(), "--tokens", "1"});
  expect_cpp<ModelFormatError>("B65", [&] { Model::load(m.path()); });
}

}   // namespace
}   // namespace glassbox
