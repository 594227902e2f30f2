// The safetensors reader on well-formed and hostile files.
#include <gtest/gtest.h>

#include <cstring>

#include "glassbox/error.h"
#include "glassbox/safetensors.h"
#include "test_util.h"

namespace glassbox {
namespace {

SafeTensors parse(const std::string& file) {
  auto owner = std::make_shared<std::string>(file);
  return SafeTensors::parse(std::as_bytes(std::span(owner->data(), owner->size())), "test.safetensors", owner);
}

// The message of the ModelFormatError that f() throws, or "(no error)".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ModelFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

// ... that parsing `file` throws.
std::string parse_error(const std::string& file) {
  return error_of([&] { parse(file); });
}

TEST(SafeTensors, ReadsTensorsByName) {
  const auto file = test::make_safetensors({test::f32_tensor("b", {2, 3}, {1, 2, 3, 4, 5, 6}),
                                            test::f32_tensor("a", {}, {7}),
                                            {"mask", "U8", {2}, std::string("\x01\x00", 2)}});
  const auto st = parse(file);
  ASSERT_EQ(st.tensors().size(), 3u);
  const TensorInfo* b = st.find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, DType::F32);
  EXPECT_EQ(b->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(b->numel, 6);
  float last;
  std::memcpy(&last, b->bytes.data() + 20, 4);
  EXPECT_EQ(last, 6.0f);
  EXPECT_EQ(st.find("a")->numel, 1);   // a scalar has shape [] and one element
  EXPECT_EQ(st.find("mask")->dtype, DType::U8);
  EXPECT_EQ(st.find("missing"), nullptr);
}

TEST(SafeTensors, AcceptsMetadataAndEmptyTensors) {
  const auto file = test::make_safetensors_raw(
      R"({"__metadata__":{"format":"pt"},"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},)"
      R"("x":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})",
      "abcd");
  const auto st = parse(file);
  EXPECT_EQ(st.find("e")->numel, 0);
  EXPECT_EQ(st.find("x")->bytes.size(), 4u);
}

TEST(SafeTensors, RejectsTooShortFile) {
  EXPECT_EQ(parse_error("abc"), "test.safetensors: file is 3 bytes, too short for a safetensors header");
}

TEST(SafeTensors, RejectsHeaderLengthPastTheEnd) {
  std::string file = test::make_safetensors({test::f32_tensor("a", {1}, {1})});
  file[0] = '\xff';
  file[1] = '\xff';
  EXPECT_NE(parse_error(file).find("runs past the end"), std::string::npos);
  std::string huge(8, '\xff');   // 2^64 - 1: must not overflow into a small number
  EXPECT_NE(parse_error(huge + "{}").find("runs past the end"), std::string::npos);
}

TEST(SafeTensors, RejectsTruncatedData) {
  const std::string file = test::make_safetensors({test::f32_tensor("a", {4}, {1, 2, 3, 4})});
  EXPECT_NE(parse_error(file.substr(0, file.size() - 1))
                .find("tensor 'a': data ends at byte 16 of a data section of 15 bytes"),
            std::string::npos);
}

TEST(SafeTensors, RejectsMalformedHeaders) {
  EXPECT_NE(parse_error(test::make_safetensors_raw("[1,2]", "")).find("not a JSON object"), std::string::npos);
  EXPECT_NE(parse_error(test::make_safetensors_raw("{\"a\": ", "")).find("not valid JSON"), std::string::npos);
  EXPECT_NE(parse_error(test::make_safetensors_raw("", "")).find("not a JSON object"), std::string::npos);
  EXPECT_NE(
      parse_error(test::make_safetensors_raw(R"({"a": 5})", "")).find("tensor 'a': header entry is not an object"),
      std::string::npos);
  EXPECT_NE(parse_error(test::make_safetensors_raw(R"({"a": {"dtype":"F32","shape":[1]}})", "abcd"))
                .find("\"data_offsets\" must be [begin, end]"),
            std::string::npos);
  EXPECT_NE(
      parse_error(test::make_safetensors_raw(R"({"a": {"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"))
          .find("shape dimension must be a non-negative integer"),
      std::string::npos);
  EXPECT_NE(
      parse_error(test::make_safetensors_raw(R"({"a": {"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", "abcd"))
          .find("begin after they end"),
      std::string::npos);
  EXPECT_NE(
      parse_error(test::make_safetensors_raw(R"({"__metadata__": 3})", "")).find("\"__metadata__\" is not an object"),
      std::string::npos);
}

TEST(SafeTensors, RejectsUnknownDtype) {
  EXPECT_EQ(
      parse_error(test::make_safetensors_raw(R"({"a": {"dtype":"F12","shape":[1],"data_offsets":[0,4]}})", "abcd")),
      "test.safetensors: tensor 'a': unknown dtype \"F12\"");
}

TEST(SafeTensors, RejectsSizeMismatch) {
  EXPECT_EQ(
      parse_error(test::make_safetensors_raw(R"({"a": {"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "abcd")),
      "test.safetensors: tensor 'a': F32 shape needs 8 bytes but data_offsets give 4");
  // A shape whose byte count overflows 64 bits must not wrap around to a small number.
  EXPECT_NE(parse_error(test::make_safetensors_raw(
                            R"({"a": {"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""))
                .find("shape is too large"),
            std::string::npos);
}

TEST(SafeTensors, RejectsOverlappingTensors) {
  EXPECT_EQ(parse_error(test::make_safetensors_raw(R"({"a": {"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                                   R"("b": {"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                                   "abcdefgh")),
            "test.safetensors: tensors 'a' and 'b' overlap");
}

TEST(SafeTensors, RejectsGapsTrailingBytesDuplicatesAndDeepNesting) {
  EXPECT_EQ(parse_error(test::make_safetensors_raw(R"({"a": {"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                                   R"("b": {"dtype":"U8","shape":[1],"data_offsets":[3,4]}})",
                                                   "abcd")),
            "test.safetensors: bytes 2..3 of the data section belong to no tensor");
  EXPECT_EQ(parse_error(test::make_safetensors({test::f32_tensor("a", {1}, {1})}) + "junk"),
            "test.safetensors: 4 bytes after the last tensor belong to no tensor");
  EXPECT_EQ(parse_error(test::make_safetensors_raw(R"({"a": {"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                                                   R"("a": {"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                                                   "ab")),
            "test.safetensors: tensor 'a' is named twice in the header");
  const std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_NE(parse_error(test::make_safetensors_raw(deep, "")).find("nests deeper"), std::string::npos);
  // Brackets inside strings do not count.
  EXPECT_EQ(parse_error(test::make_safetensors_raw(R"({"__metadata__":{"note":"[[[[{{{{\"]]"}})", "")), "(no error)");
}

// The header alone (what a browser reads first to decide whether a model fits): the same tensors,
// shapes and offsets as the whole file gives, the same refusals of overlaps, gaps and broken
// headers, and no data.
std::string header_error(const std::string& prefix) {
  return error_of(
      [&] { SafeTensors::parse_header(std::as_bytes(std::span(prefix.data(), prefix.size())), "test.safetensors"); });
}

TEST(SafeTensors, ParseHeaderDescribesTheFileWithoutItsData) {
  const auto file = test::make_safetensors({test::f32_tensor("b", {2, 3}, {1, 2, 3, 4, 5, 6}),
                                            test::f32_tensor("a", {}, {7}),
                                            {"mask", "U8", {2}, std::string("\x01\x00", 2)}});
  const auto whole = SafeTensors::parse(std::as_bytes(std::span(file.data(), file.size())), "test.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  const std::string header = file.substr(0, 8 + n);
  const auto layout =
      SafeTensors::parse_header(std::as_bytes(std::span(header.data(), header.size())), "test.safetensors");
  EXPECT_EQ(layout.data_start(), whole.data_start());
  ASSERT_EQ(layout.tensors().size(), whole.tensors().size());
  for (std::size_t i = 0; i < whole.tensors().size(); ++i) {
    const TensorInfo& h = layout.tensors()[i];
    const TensorInfo& w = whole.tensors()[i];
    EXPECT_EQ(h.name, w.name);
    EXPECT_EQ(h.dtype, w.dtype);
    EXPECT_EQ(h.shape, w.shape);
    EXPECT_EQ(h.offset, w.offset);
    EXPECT_EQ(reinterpret_cast<const char*>(w.bytes.data()), file.data() + whole.data_start() + w.offset);
    EXPECT_TRUE(h.bytes.empty());
  }
  // Bytes beyond the header change nothing.
  EXPECT_EQ(header_error(file), "(no error)");
  // A header cut short, and what parse() refuses in a header.
  EXPECT_NE(header_error(header.substr(0, header.size() - 1)).find("runs past the end of the"), std::string::npos);
  EXPECT_EQ(header_error(test::make_safetensors_raw(R"({"a": {"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                                    R"("b": {"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                                    "")),
            "test.safetensors: tensors 'a' and 'b' overlap");
  EXPECT_EQ(header_error(test::make_safetensors_raw(R"({"a": {"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                                    R"("b": {"dtype":"U8","shape":[1],"data_offsets":[3,4]}})",
                                                    "")),
            "test.safetensors: bytes 2..3 of the data section belong to no tensor");
  EXPECT_NE(header_error(std::string("\x08\0\0\0\0\0\0\0notjson!", 16)).find("header is not"), std::string::npos);
  EXPECT_NE(header_error(std::string(8, '\xff') + "{}").find("exceeds the 16 MB limit"), std::string::npos);
}

TEST(SafeTensors, OpenNamesTheMissingFile) {
  try {
    SafeTensors::open("/nonexistent/model.safetensors");
    FAIL() << "no error";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.safetensors: cannot open"), std::string::npos);
  }
}

TEST(SafeTensors, OpenEmptyFile) {
  test::TempDir dir;
  test::write_file(dir.path() / "empty.safetensors", "");
  EXPECT_THROW(SafeTensors::open(dir.path() / "empty.safetensors"), ModelFormatError);
}

}   // namespace
}   // namespace glassbox
