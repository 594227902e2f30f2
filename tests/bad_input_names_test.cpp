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

TEST(BadInput, B67_NonAsciiNameInAMessage) {
  BrokenModel m([](const auto& dir) { edit_config(dir, "model_type", "ll\xC3\xA4ma"); });
  expect_cli("B67", {"forward", "-m", m.path(), "--tokens", "1"});
  expect_cpp<ModelFormatError>("B67", [&] { Model::load(m.path()); });
}

TEST(BadInput, B72_NulInANameInAMessage) {
  BrokenModel m([](const auto& dir) { edit_config(dir, "model_type", std::string("ll\0ama", 6)); });
  expect_cli("B72", {"forward", "-m", m.path(), "--tokens", "1"});
  expect_cpp<ModelFormatError>("B72", [&] { Model::load(m.path()); });
}

}   // namespace
}   // namespace glassbox
