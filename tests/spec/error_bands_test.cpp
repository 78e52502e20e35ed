// The error-bands file: a round trip keeps every band, and a bad field names
// the file, its JSON path and what was expected.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "spec/error_bands.h"
#include "expect_spec_error.h"

namespace trainplan::spec {
namespace {

using test_support::expect_spec_error;

nlohmann::json bands_json() {
  return nlohmann::json::parse(R"({
    "coverage": 0.8, "computed_on": "test corpus",
    "throughput": {"runs": 10, "low": -0.1, "median": 0.0, "high": 0.2},
    "throughput_by_family": {"a100": {"runs": 4, "low": -0.05, "median": 0.01, "high": 0.1}},
    "memory": {"runs": 6, "low": -0.12, "median": -0.04, "high": 0.05}, "memory_families": ["a100", "v100"]})");
}

TEST(ErrorBandsFile, RoundTripKeepsEveryBand) {
  const ErrorBands b = error_bands_from_json(bands_json(), "bands.json");
  EXPECT_DOUBLE_EQ(b.coverage, 0.8);
  EXPECT_EQ(b.throughput.runs, 10);
  EXPECT_DOUBLE_EQ(b.throughput_by_family.at("a100").high, 0.1);
  EXPECT_DOUBLE_EQ(b.memory.low, -0.12);
  const ErrorBands again = error_bands_from_json(error_bands_to_json(b), "again.json");
  EXPECT_EQ(again.computed_on, "test corpus");
  EXPECT_DOUBLE_EQ(again.throughput_by_family.at("a100").median, 0.01);
  EXPECT_EQ(again.memory.runs, 6);
  EXPECT_EQ(again.memory_families, (std::vector<std::string>{"a100", "v100"}));
}

TEST(ErrorBandsFile, BadFieldsNameTheirPath) {
  nlohmann::json j = bands_json();
  j["memory"]["low"] = 0.3;  // above the median
  expect_spec_error([&] { error_bands_from_json(j, "bands.json"); }, "$.memory", "low <= median <= high",
                    "bands.json");
  j = bands_json();
  j["throughput_by_family"]["h100"] = {{"runs", 3}, {"low", -1.0}, {"median", 0}, {"high", 0.1}};
  expect_spec_error([&] { error_bands_from_json(j, "bands.json"); }, "$.throughput_by_family.h100.low",
                    "above -1");
  j = bands_json();
  j["coverage"] = 1.5;
  expect_spec_error([&] { error_bands_from_json(j, "bands.json"); }, "$.coverage", "between 0 and 1");
  j = bands_json();
  j.erase("memory");
  expect_spec_error([&] { error_bands_from_json(j, "bands.json"); }, "$.memory", "");
  j = bands_json();
  j["throughput"]["hgih"] = 0.1;
  expect_spec_error([&] { error_bands_from_json(j, "bands.json"); }, "$.throughput.hgih", "high");
}

}  // namespace
}  // namespace trainplan::spec
