#include "report/column_choice.h"

#include <gtest/gtest.h>

#include "spec/error.h"

namespace trainplan::report {
namespace {

Table wide() {
  Table t;
  t.key = "best_plans";
  t.columns = {{"rank", "", NumberStyle::integer}, {"TP", "", NumberStyle::integer}, {"step time", "s"},
               {"throughput", "tokens/s"}};
  t.add_row({1.0, 8.0, 1.5, 2e6});
  t.reading_view = {"rank", "throughput_tokens_per_s"};
  return t;
}

// A person's text and markdown show the reading view; csv and json every
// column; --columns picks by key (all: everything), in the order given.
TEST(ColumnChoice, ReadingViewForPeopleEveryColumnForPrograms) {
  EXPECT_EQ(choose_columns({wide()}, "text", "")[0].columns.size(), 2u);
  EXPECT_EQ(choose_columns({wide()}, "markdown", "")[0].columns.size(), 2u);
  EXPECT_EQ(choose_columns({wide()}, "csv", "")[0].columns.size(), 4u);
  EXPECT_EQ(choose_columns({wide()}, "json", "")[0].columns.size(), 4u);
  EXPECT_EQ(choose_columns({wide()}, "text", "all")[0].columns.size(), 4u);
  const Table picked = choose_columns({wide()}, "csv", "step_time_s,tp")[0];
  ASSERT_EQ(picked.columns.size(), 2u);
  EXPECT_EQ(picked.columns[0].machine_key(), "step_time_s");
  EXPECT_EQ(std::get<double>(picked.rows[0][0]), 1.5);
  EXPECT_EQ(std::get<double>(picked.rows[0][1]), 8.0);
}

TEST(ColumnChoice, AnUnknownKeyIsRefusedWithTheNearest) {
  try {
    choose_columns({wide()}, "text", "rank,step_time");
    FAIL() << "step_time is no key";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean step_time_s?"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainplan::report
