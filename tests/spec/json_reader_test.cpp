// JsonReader's plain numbers, whole numbers and optional settings: a value
// in range reads as written, and a bad one names the file, its JSON path and
// what was expected, never a cast or wrapped neighbour of what was written.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "spec/json_reader.h"
#include "expect_spec_error.h"

namespace trainplan::spec {
namespace {

using nlohmann::json;
using test_support::expect_spec_error;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kIntMax = std::numeric_limits<int>::max();

TEST(JsonReaderNumber, InRangeReadsAsWritten) {
  const JsonReader r("f.json");
  const json j = json::parse(R"({"share": 0.5, "zero": 0, "big": 1e300})");
  EXPECT_DOUBLE_EQ(r.number(j, "$", "share", 0, 1), 0.5);
  EXPECT_DOUBLE_EQ(r.number(j, "$", "zero", 0, 1, true), 0.0);
  EXPECT_DOUBLE_EQ(r.number(j, "$", "big", 0, kInf), 1e300);
}

TEST(JsonReaderNumber, OutOfRangeOrNotANumberNamesThePath) {
  const JsonReader r("f.json");
  const json j = json::parse(R"({"c": {"share": 0, "half": 2, "neg": -1, "word": "1", "figure": {"value": 1}}})");
  const json& c = j["c"];
  expect_spec_error([&] { r.number(c, "$.c", "share", 0, 1); }, "$.c.share", "a number in (0, 1], got 0", "f.json");
  expect_spec_error([&] { r.number(c, "$.c", "half", 0, 1, true); }, "$.c.half", "a number in [0, 1], got 2");
  expect_spec_error([&] { r.number(c, "$.c", "neg", 0, kInf); }, "$.c.neg", "a number > 0, got -1");
  expect_spec_error([&] { r.number(c, "$.c", "neg", 0, kInf, true); }, "$.c.neg", "a number >= 0, got -1");
  expect_spec_error([&] { r.number(c, "$.c", "word", 0, 1); }, "$.c.word", "expected a number");
  // Unlike positive(), the {"value": x} form is not a plain number.
  expect_spec_error([&] { r.number(c, "$.c", "figure", 0, kInf); }, "$.c.figure", "expected a number");
  expect_spec_error([&] { r.number(c, "$.c", "absent", 0, 1); }, "$.c.absent", "missing field");
}

TEST(JsonReaderNumber, InfinityIsNeverInRange) {
  const JsonReader r("f.json");
  const json j = {{"x", kInf}};
  expect_spec_error([&] { r.number(j, "$", "x", 0, kInf); }, "$.x", "a number > 0");
}

TEST(JsonReaderWhole, InRangeReadsAsWritten) {
  const JsonReader r("f.json");
  const json j = json::parse(R"({"tp": 8, "zero": 0, "max": 2147483647, "neg": -3})");
  EXPECT_EQ(r.whole(j, "$", "tp", 1, kIntMax), 8);
  EXPECT_EQ(r.whole(j, "$", "zero", 0, 3), 0);
  EXPECT_EQ(r.whole(j, "$", "max", 1, kIntMax), kIntMax);
  EXPECT_EQ(r.whole(j, "$", "neg", -5, 5), -3);
}

TEST(JsonReaderWhole, NeverCastNorWrapped) {
  const JsonReader r("f.json");
  const json j = json::parse(R"({"p": {"half": 2.5, "float": 8.0, "wrapped": 4294967304, "huge": 18446744073709551615,
                                      "neg": -1, "word": "8", "zero": 4}})");
  const json& p = j["p"];
  expect_spec_error([&] { r.whole(p, "$.p", "half", 1, kIntMax); }, "$.p.half", "an integer from 1 to 2147483647, got 2.5",
                    "f.json");
  expect_spec_error([&] { r.whole(p, "$.p", "float", 1, kIntMax); }, "$.p.float", "got 8.0");
  // 2^32 + 8 is 8 once cast to a 32-bit int.
  expect_spec_error([&] { r.whole(p, "$.p", "wrapped", 1, kIntMax); }, "$.p.wrapped", "got 4294967304");
  // 2^64 - 1 is -1 once cast to a signed 64-bit int.
  expect_spec_error([&] { r.whole(p, "$.p", "huge", -5, 5); }, "$.p.huge", "got 18446744073709551615");
  expect_spec_error([&] { r.whole(p, "$.p", "neg", 0, 3); }, "$.p.neg", "an integer from 0 to 3, got -1");
  expect_spec_error([&] { r.whole(p, "$.p", "zero", 0, 3); }, "$.p.zero", "an integer from 0 to 3, got 4");
  expect_spec_error([&] { r.whole(p, "$.p", "word", 1, kIntMax); }, "$.p.word", "got \"8\"");
  expect_spec_error([&] { r.whole(p, "$.p", "absent", 1, kIntMax); }, "$.p.absent", "missing field");
}

TEST(JsonReaderOptional, AbsentIsTheFallbackPresentIsChecked) {
  const JsonReader r("f.json");
  const json j = json::parse(R"({"tp": 4, "sp": true, "pp": 0, "overlap": "yes"})");
  EXPECT_EQ(r.whole_or(j, "$", "tp", 1, 1, kIntMax), 4);
  EXPECT_EQ(r.whole_or(j, "$", "cp", 1, 1, kIntMax), 1);
  EXPECT_EQ(r.whole_or(j, "$", "etp", 0, 1, kIntMax), 0);  // a fallback outside the range: "not stated"
  EXPECT_TRUE(r.boolean_or(j, "$", "sp", false));
  EXPECT_TRUE(r.boolean_or(j, "$", "overlap_dp", true));
  EXPECT_FALSE(r.boolean_or(j, "$", "edge", false));
  expect_spec_error([&] { r.whole_or(j, "$", "pp", 1, 1, 64); }, "$.pp", "an integer from 1 to 64, got 0");
  expect_spec_error([&] { r.boolean_or(j, "$", "overlap", false); }, "$.overlap", "true or false");
}

}  // namespace
}  // namespace trainplan::spec
