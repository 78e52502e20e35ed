// Megatron-LM core_r0.13.0's and torchrun's option names (NVIDIA/Megatron-LM@73a28a10
// megatron/training/arguments.py; pytorch/pytorch@010929fd torch/distributed/run.py):
// a script's option neither defines is said apart from the ones the client reads
// and trainplan does not, since that release stops on it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "export/megatron_config.h"
#include "export/megatron_options.h"
#include "spec/load.h"
#include "spec/text_file.h"

namespace trainplan::exporting {
namespace {

TEST(MegatronOptions, TheReleaseAndTorchrunDefineTheirOwn) {
  EXPECT_TRUE(megatron_lm_or_torchrun_parses("--tensor-model-parallel-size"));
  EXPECT_TRUE(megatron_lm_or_torchrun_parses("--fsdp-double-buffer"));  // arguments.py, read by no trainplan price
  EXPECT_TRUE(megatron_lm_or_torchrun_parses("--nproc_per_node"));      // torchrun's, both spellings
  EXPECT_TRUE(megatron_lm_or_torchrun_parses("--nproc-per-node"));
  EXPECT_FALSE(megatron_lm_or_torchrun_parses("--tensor-model-paralel-size"));  // a typo
  EXPECT_FALSE(megatron_lm_or_torchrun_parses("--use-megatron-fsdp"));          // a later release's
  EXPECT_FALSE(megatron_lm_or_torchrun_parses("--tensor_model_parallel_size"));  // Megatron spells with dashes
}

TEST(MegatronOptions, AnOptionNeitherDefinesIsSaidApart) {
  const std::string nvidia = std::string(TRAINPLAN_SOURCE_DIR) + "/tests/export/fixtures/megatron-llama3-8b-h100-fp8.sh";
  std::string script = spec::read_text_file(nvidia);
  script.insert(script.find("--num-layers"), "--tensor-model-paralel-size 2 ");
  const LaunchJob job = read_megatron(script, "x.sh");
  const auto note_with = [&](const std::string& part) {
    return std::find_if(job.notes.begin(), job.notes.end(),
                        [&](const std::string& n) { return n.find(part) != std::string::npos; });
  };
  const auto unknown = note_with("do not define");
  ASSERT_NE(unknown, job.notes.end());
  EXPECT_NE(unknown->find("--tensor-model-paralel-size"), std::string::npos) << *unknown;
  EXPECT_EQ(unknown->find("--use-mcore-models"), std::string::npos) << *unknown;
  const auto unread = note_with("the client reads these");
  ASSERT_NE(unread, job.notes.end());
  EXPECT_NE(unread->find("--use-mcore-models"), std::string::npos) << *unread;
  EXPECT_EQ(unread->find("--tensor-model-paralel-size"), std::string::npos) << *unread;
  // NVIDIA's own example names no option outside the two parsers.
  const LaunchJob as_published = read_megatron(spec::read_text_file(nvidia), "x.sh");
  EXPECT_EQ(std::count_if(as_published.notes.begin(), as_published.notes.end(),
                          [](const std::string& n) { return n.find("do not define") != std::string::npos; }),
            0);
}

}  // namespace
}  // namespace trainplan::exporting
