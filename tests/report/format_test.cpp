// Tests for report::parse_format and number formatting.
#include <gtest/gtest.h>

#include <cmath>

#include "report/format.h"
#include "report/number_format.h"
#include "spec/error.h"

namespace trainplan::report {
namespace {

TEST(Format, ParsesTheFourWordsAndRejectsOthers) {
  EXPECT_EQ(parse_format("text"), Format::text);
  EXPECT_EQ(parse_format("markdown"), Format::markdown);
  EXPECT_EQ(parse_format("csv"), Format::csv);
  EXPECT_EQ(parse_format("json"), Format::json);
  EXPECT_STREQ(to_string(Format::markdown), "markdown");
  try {
    parse_format("yaml");
    FAIL() << "yaml accepted";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("text|markdown|csv|json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("yaml"), std::string::npos);
  }
  EXPECT_THROW(parse_format("JSON"), spec::SpecError);
}

TEST(NumberFormat, FixedIntegerPercent) {
  EXPECT_EQ(format_human(3.14159, NumberStyle::fixed, 2, "s"), "3.14");
  EXPECT_EQ(format_human(10102387.4, NumberStyle::integer, 0, ""), "10,102,387");
  EXPECT_EQ(format_human(-1234, NumberStyle::integer, 0, ""), "-1,234");
  EXPECT_EQ(format_human(999, NumberStyle::integer, 0, ""), "999");
  EXPECT_EQ(format_human(0.9881, NumberStyle::percent, 2, ""), "98.81%");
}

TEST(NumberFormat, EngineeringScalesUnits) {
  EXPECT_EQ(format_human(0.00123, NumberStyle::engineering, 0, "s"), "1.23 ms");
  EXPECT_EQ(format_human(45e-6, NumberStyle::engineering, 0, "s"), "45.0 µs");
  EXPECT_EQ(format_human(0.99996, NumberStyle::engineering, 0, "s"), "1.00 s");
  EXPECT_EQ(format_human(90, NumberStyle::engineering, 0, "s"), "1.50 min");
  EXPECT_EQ(format_human(7200, NumberStyle::engineering, 0, "s"), "2.00 h");
  // 45.6 GiB = 45.6 * 2^30 bytes.
  EXPECT_EQ(format_human(45.6 * 1073741824.0, NumberStyle::engineering, 0, "B"), "45.6 GiB");
  EXPECT_EQ(format_human(512, NumberStyle::engineering, 0, "B"), "512 B");
  EXPECT_EQ(format_human(190e12, NumberStyle::engineering, 0, "FLOP/s"), "190 TFLOP/s");
  EXPECT_EQ(format_human(0, NumberStyle::engineering, 0, "s"), "0 s");
  EXPECT_EQ(format_human(std::nan(""), NumberStyle::fixed, 2, ""), "n/a");
}

TEST(NumberFormat, RawRoundTripsAndKeysCarryUnits) {
  EXPECT_EQ(format_raw(5.0), "5");
  EXPECT_EQ(format_raw(0.1), "0.1");
  EXPECT_EQ(std::stod(format_raw(1.0 / 3.0)), 1.0 / 3.0);
  EXPECT_EQ(unit_key("s"), "s");
  EXPECT_EQ(unit_key("B"), "bytes");
  EXPECT_EQ(unit_key("B/s"), "bytes_per_s");
  EXPECT_EQ(unit_key("FLOP/s"), "flops_per_s");
  EXPECT_EQ(unit_key("tokens/s"), "tokens_per_s");
  EXPECT_EQ(unit_key("USD"), "usd");
  EXPECT_EQ(snake_case("Step time (total)"), "step_time_total");
  EXPECT_EQ(display_width("µs"), 2u);
}

}  // namespace
}  // namespace trainplan::report
