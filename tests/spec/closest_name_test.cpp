#include "spec/closest_name.h"

#include <gtest/gtest.h>

namespace trainplan::spec {
namespace {

// "did you mean": a name the text begins, else one within a few edits.
TEST(ClosestName, PrefixFirstThenFewEdits) {
  const std::vector<std::string> hardware{"trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "p5.48xlarge"};
  EXPECT_EQ(closest_name("trn1", hardware), "trn1.32xlarge");  // the shortest name it begins
  EXPECT_EQ(closest_name("trn2.48xlarg", hardware), "trn2.48xlarge");
  EXPECT_EQ(closest_name("p5.48xlarg", hardware), "p5.48xlarge");
  const std::vector<std::string> models{"llama2-7b", "llama2-70b", "llama3-70b", "mixtral-8x7b"};
  EXPECT_EQ(closest_name("llama3-70", models), "llama3-70b");
  EXPECT_EQ(closest_name("lama2-7b", models), "llama2-7b");
  EXPECT_EQ(closest_name("gpt-j", models), "");  // nothing close: no guess
  EXPECT_EQ(closest_name("", models), "");
  EXPECT_EQ(closest_name(std::string(1000, 'l'), models), "");
  EXPECT_EQ(edit_distance("--tpp", "--tp"), 1u);
}

}  // namespace
}  // namespace trainplan::spec
