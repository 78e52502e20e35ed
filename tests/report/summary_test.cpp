// Tests for report::render_summary: shares, bars and the machine formats.
#include "report/summary.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace trainplan::report {
namespace {

Summary step_time() {
  SummarySection section;
  section.title = "Where step time goes";
  section.unit = "s";
  section.lines = {{"compute", 3.0}, {"bubble", 0.75}, {"exposed DP", 0.25}};
  Summary s;
  s.title = "llama2-7b";
  s.sections = {section};
  s.notes = {"model figures from cost::evaluate"};
  return s;
}

std::string render(const Summary& s, Format f, int bar_width = 40) {
  std::ostringstream out;
  render_summary(out, s, f, bar_width);
  return out.str();
}

TEST(Summary, TextShowsSharesAndProportionalBars) {
  const std::string text = render(step_time(), Format::text, 20);
  EXPECT_NE(text.find("(total 4.00 s)"), std::string::npos);
  // 3 of 4 s = 75% -> 15 of 20 marks; 0.25 of 4 s = 6.25% -> round(1.25) = 1 mark.
  EXPECT_NE(text.find(" 75.0%  ###############\n"), std::string::npos);
  EXPECT_NE(text.find("  6.2%  #\n"), std::string::npos);  // printf rounds 6.25 half to even
  EXPECT_EQ(text.find("################"), std::string::npos);
}

TEST(Summary, GivenTotalOverridesSum) {
  Summary s = step_time();
  s.sections[0].total = 6.0;
  EXPECT_NE(render(s, Format::text).find(" 50.0%"), std::string::npos);
}

TEST(Summary, CsvAndJsonCarryRawValuesAndShares) {
  EXPECT_NE(render(step_time(), Format::csv).find("Where step time goes,compute,3,s,0.75\n"), std::string::npos);
  const auto doc = nlohmann::json::parse(render(step_time(), Format::json));
  EXPECT_EQ(doc["sections"][0]["unit"], "s");
  EXPECT_DOUBLE_EQ(doc["sections"][0]["total"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(doc["sections"][0]["lines"][1]["share"].get<double>(), 0.1875);
  EXPECT_EQ(doc["notes"][0], "model figures from cost::evaluate");
}

TEST(Summary, MarkdownHasOneTablePerSection) {
  const std::string md = render(step_time(), Format::markdown);
  EXPECT_NE(md.find("#### Where step time goes (total 4.00 s)"), std::string::npos);
  EXPECT_NE(md.find("| compute | 3.00 s | 75.0% |"), std::string::npos);
}

}  // namespace
}  // namespace trainplan::report
