// Tests for report::render_table in the four formats.
#include "report/table_render.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "spec/error.h"

namespace trainplan::report {
namespace {

Table sample() {
  Table t;
  t.title = "Layouts";
  t.columns = {{"layout", "", NumberStyle::fixed, 0},
               {"step", "s", NumberStyle::engineering, 0},
               {"tokens per $", "", NumberStyle::integer, 0, Align::automatic, "tokens_per_usd"},
               {"MFU", "", NumberStyle::percent, 1},
               {"memory", "B", NumberStyle::fixed, 0}};
  t.add_row({std::string("TP8, \"SP\""), 0.00123, 10102387.0, 0.4567, 1024.0});
  t.add_row({std::string("TP8|PP4"), 12.5, 3302704.0, 0.5, Cell{}});
  t.notes = {"prices: 3-year reserved"};
  return t;
}

std::string render(const Table& t, Format f) {
  std::ostringstream out;
  render_table(out, t, f);
  return out.str();
}

TEST(TableRender, TextAlignsNumbersRight) {
  const std::string text = render(sample(), Format::text);
  std::istringstream lines(text);
  std::string title, header, rule, row1, row2, note;
  std::getline(lines, title);
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, row1);
  std::getline(lines, row2);
  std::getline(lines, note);
  EXPECT_EQ(title, "Layouts");
  EXPECT_NE(header.find("memory (B)"), std::string::npos);  // unit in parentheses for a fixed column
  EXPECT_NE(row1.find("1.23 ms"), std::string::npos);
  EXPECT_NE(row1.find("10,102,387"), std::string::npos);
  EXPECT_NE(row1.find("45.7%"), std::string::npos);
  EXPECT_NE(row2.find("12.5 s"), std::string::npos);
  EXPECT_EQ(row2.back(), '-');  // an empty cell shows as '-'
  // Right alignment: both step cells end in the same column.
  EXPECT_EQ(row1.find("1.23 ms") + 7, row2.find("12.5 s") + 6);
  EXPECT_EQ(note, "prices: 3-year reserved");
}

// Text titles and notes fit a 120-column terminal: a long note breaks at spaces,
// continuation lines indented, no word lost or split; short notes stay as written.
TEST(TableRender, TextWrapsLongNotesAt120Columns) {
  Table t = sample();
  std::string long_note;
  for (int i = 0; i < 60; ++i) long_note += "word" + std::to_string(i) + " ";
  long_note += "https://example.com/" + std::string(130, 'x');  // one word longer than the width
  t.notes = {long_note, "short note"};
  std::istringstream lines(render(t, Format::text));
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  ASSERT_GE(all.size(), 9u);
  std::string rejoined;
  for (std::size_t i = 5; i + 1 < all.size(); ++i) {
    if (all[i].size() > 120)  // only a line holding one unbreakable word may run past 120
      EXPECT_EQ(all[i].find(' ', 2), std::string::npos) << all[i];
    if (i > 5) EXPECT_EQ(all[i].rfind("  ", 0), 0u) << "continuation indented: " << all[i];
    std::istringstream words(all[i]);
    for (std::string w; words >> w;) rejoined += w + " ";
  }
  std::string expected;
  std::istringstream words(long_note);
  for (std::string w; words >> w;) expected += w + " ";
  EXPECT_EQ(rejoined, expected);
  EXPECT_EQ(all.back(), "short note");
}

// A table wider than 120 columns with two-line headers breaks its long text
// cells after ", " and " / " (never inside a piece), the widest first; a table
// that fits keeps every row on one line.
TEST(TableRender, TextWrapsLongTextCellsOnlyWhereTheTableIsTooWide) {
  Table t;
  t.columns = {{"hardware", ""}, {"plan", ""}, {"stack, precision", ""}, {"throughput", "tokens/s", NumberStyle::integer}};
  const std::string plan = "TP 16 / PP 2 / SP / v4 / mb 1 / ZeRO 1 / selective / no DP overlap / " + std::string(30, 'x');
  t.add_row({std::string("trn1.32xlarge"), plan, std::string("neuronx-distributed, bf16-sr"), 42511.0});
  t.add_row({std::string("p5.48xlarge"), std::string("TP 2 / PP 4"), std::string("megatron-lm, mixed-bf16"), 147695.0});
  const std::string text = render(t, Format::text);
  std::istringstream lines(text);
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 120u) << line;
    all.push_back(line);
  }
  ASSERT_EQ(all.size(), 6u) << text;  // a two-line header, the rule, a two-line row, a row
  EXPECT_EQ(all[3].find("trn1.32xlarge"), 0u) << text;
  EXPECT_EQ(all[4].find_first_not_of(' '), all[3].find("TP 16")) << text;  // the plan's next line, under it
  EXPECT_NE(text.find(std::string(30, 'x')), std::string::npos) << text;   // a piece stays whole
  EXPECT_NE(text.find("147,695"), std::string::npos);

  Table narrow = sample();
  EXPECT_EQ(render(narrow, Format::text).find("TP8, \"SP\"\n"), std::string::npos);  // no row broken
  std::istringstream narrow_lines(render(narrow, Format::text));
  int rows = 0;
  for (std::string line; std::getline(narrow_lines, line);) rows += line.rfind("TP8", 0) == 0;
  EXPECT_EQ(rows, 2);
}

TEST(TableRender, MarkdownEscapesPipes) {
  const std::string md = render(sample(), Format::markdown);
  EXPECT_EQ(md.rfind("### Layouts\n", 0), 0u);
  EXPECT_NE(md.find("| :--- | ---: |"), std::string::npos);
  EXPECT_NE(md.find("TP8\\|PP4"), std::string::npos);
}

TEST(TableRender, CsvQuotesPerRfc4180AndKeepsRawNumbers) {
  const std::string csv = render(sample(), Format::csv);
  EXPECT_EQ(csv,
            "layout,step_s,tokens_per_usd,mfu,memory_bytes\n"
            "\"TP8, \"\"SP\"\"\",0.00123,10102387,0.4567,1024\n"
            "TP8|PP4,12.5,3302704,0.5,\n");
}

TEST(TableRender, JsonIsArrayOfObjectsWithUnitKeys) {
  const auto doc = nlohmann::json::parse(render(sample(), Format::json));
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc[0]["layout"], "TP8, \"SP\"");
  EXPECT_DOUBLE_EQ(doc[0]["step_s"].get<double>(), 0.00123);
  EXPECT_TRUE(doc[0]["tokens_per_usd"].is_number_integer());
  EXPECT_EQ(doc[0]["tokens_per_usd"].get<long long>(), 10102387);
  EXPECT_TRUE(doc[1]["memory_bytes"].is_null());
}

TEST(TableRender, RowOfWrongWidthIsRefused) {
  Table t = sample();
  EXPECT_THROW(t.add_row({1.0}), spec::SpecError);
}

// The Python module takes tables_document where the program prints --format json:
// the printed document must be that object, indented, and nothing else.
TEST(TableRender, JsonDocumentPrintsTablesDocument) {
  Table t = sample();
  t.key = "layouts";
  t.scope = {{"hardware", "p5.48xlarge"}};
  const JsonDocument head{"search", 1, R"({"top":2,"hardware":"p5.48xlarge"})"};
  std::ostringstream printed;
  render_tables(printed, {t, t}, "json", head);
  const nlohmann::ordered_json document = tables_document(head, {t, t});
  EXPECT_EQ(printed.str(), document.dump(2) + "\n");
  EXPECT_EQ(document.at("schema"), "trainplan/search/1");
  EXPECT_EQ(document.at("query").begin().key(), "top");  // the query keeps its order
  EXPECT_EQ(document.at("tables").size(), 2u);
}

}  // namespace
}  // namespace trainplan::report
