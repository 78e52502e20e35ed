// NeMo-Framework-Launcher run scripts (src/export/nemo_launcher_script.h): the training config a
// script names and its training.* overrides, from the launcher's own examples at
// NVIDIA/NeMo-Framework-Launcher@26e42fa9 (tests/export/fixtures/clients/SOURCES.md).
#include <gtest/gtest.h>

#include <string>

#include "export/nemo_launcher_script.h"
#include "export/shell_args.h"
#include "spec/text_file.h"

namespace trainplan::exporting {
namespace {

const std::string kCheckout = std::string(TRAINPLAN_SOURCE_DIR) + "/tests/export/fixtures/clients/nemo-launcher-checkout";

TEST(NemoLauncherRun, TheConfigAndOverridesOfAPublishedScript) {
  const std::string file = kCheckout + "/examples/training/gpt/h100/175b_bf16_16node.sh";
  // As run with NEMO_FRAMEWORK_LAUNCHER_DIR in its environment (the script's ${...:-"/opt/..."}).
  const ShellArgs script = parse_shell_args("export NEMO_FRAMEWORK_LAUNCHER_DIR=/x/nfl; " + spec::read_text_file(file), file);
  const std::optional<LauncherRun> run = nemo_launcher_run(script, file);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->config_path, "/x/nfl/launcher_scripts/conf/training/gpt3/175b.yaml");
  // training.run.name, .trainer.num_nodes, .model.{global_batch_size, micro_batch_size, tensor, pipeline,
  // virtual pipeline sizes}, .run.time_limit, +training.model.optim.grad_sync_dtype.
  EXPECT_EQ(run->overrides.size(), 9u);
  EXPECT_EQ(run->overrides.front(), "training.run.name=175b_h100_bf16_16node");
  EXPECT_EQ(run->overrides.back(), "+training.model.optim.grad_sync_dtype=bf16");
  // The launcher's own items: stages, data_dir, base_results_dir (launcher_scripts_path is the folder).
  EXPECT_EQ(run->ignored.size(), 3u);
  EXPECT_EQ(run->ignored.front(), "stages=[training]");
}

TEST(NemoLauncherRun, TheFolderIsMainPysWithoutLauncherScriptsPath) {
  const ShellArgs script = parse_shell_args("python3 nfl/launcher_scripts/main.py training=llama/llama2_70b training.trainer.num_nodes=8 ~training.model.fp8\n", "/w/run.sh");
  const std::optional<LauncherRun> run = nemo_launcher_run(script, "/w/run.sh");
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->config_path, "/w/nfl/launcher_scripts/conf/training/llama/llama2_70b.yaml");  // relative to the script
  EXPECT_EQ(run->overrides, (std::vector<std::string>{"training.trainer.num_nodes=8", "~training.model.fp8"}));
}

TEST(NemoLauncherRun, OtherScriptsAreNotLauncherRuns) {
  for (const char* text : {"python3 launcher_scripts/main.py stages=[data_preparation]\n",  // no training= choice
                           "torchrun pretrain_gpt.py --tensor-model-parallel-size 2\n",
                           "python3 main.py training=gpt3/5b\n"})  // not the launcher's main.py
    EXPECT_FALSE(nemo_launcher_run(parse_shell_args(text, "run.sh"), "run.sh").has_value()) << text;
}

}  // namespace
}  // namespace trainplan::exporting
