// --stack per hardware of a command's list: one stack for all, or
// HARDWARE=STACK entries with at most one bare stack for the rest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/stack_choice.h"
#include "spec/error.h"

using trainplan::app::stack_option_for;

namespace {
const std::vector<std::string> kList{"trn1.32xlarge", "p5.48xlarge", "dl1.24xlarge"};
}

TEST(StackChoice, OneStackServesEveryHardware) {
  EXPECT_EQ(stack_option_for("", "p5.48xlarge", kList), "");
  EXPECT_EQ(stack_option_for("nemo", "p5.48xlarge", kList), "nemo");
  EXPECT_EQ(stack_option_for("neuronx-distributed@2.21", "trn1.32xlarge", kList), "neuronx-distributed@2.21");
}

TEST(StackChoice, EntriesNameTheirHardwareAndTheRestTakeTheBareOrTheDefault) {
  const std::string option = "trn1.32xlarge=neuronx-distributed@2.21,p5.48xlarge=nemo";
  EXPECT_EQ(stack_option_for(option, "trn1.32xlarge", kList), "neuronx-distributed@2.21");
  EXPECT_EQ(stack_option_for(option, "p5.48xlarge", kList), "nemo");
  EXPECT_EQ(stack_option_for(option, "dl1.24xlarge", kList), "");  // its default
  EXPECT_EQ(stack_option_for("p5.48xlarge=nemo,deepspeed-habana", "dl1.24xlarge", kList), "deepspeed-habana");
  EXPECT_EQ(stack_option_for("p5.48xlarge=nemo,deepspeed-habana", "p5.48xlarge", kList), "nemo");
}

TEST(StackChoice, ANameNoFileSystemTakesIsReadAsEntriesNotAFile) {
  const std::string long_name(5000, 'x');  // past NAME_MAX: is_regular_file fails, it must not throw
  EXPECT_EQ(stack_option_for(long_name, "p5.48xlarge", kList), long_name);
}

TEST(StackChoice, MalformedEntriesAreRefusedNamingTheOption) {
  for (const char* bad : {"trn2.48xlarge=nemo", "p5.48xlarge=nemo,p5.48xlarge=megatron-lm", "nemo,megatron-lm",
                          "p5.48xlarge=", "=nemo", "nemo,,megatron-lm"}) {
    try {
      stack_option_for(bad, "p5.48xlarge", kList);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const trainplan::spec::SpecError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--stack ") + bad), std::string::npos) << e.what();
    }
  }
}
