// Fuzz target: a Megatron-LM or Megatron-DeepSpeed launch script as `--from-config
// job.sh` reads it (parse_shell_args, then read_megatron; a --deepspeed_config the
// script writes itself with a here-document goes through read_deepspeed, as
// read_launch_config sends it). The only refusal allowed is spec::SpecError; an
// accepted job keeps fuzz_launch_job.h's promises.
#include "export/deepspeed_config.h"
#include "export/megatron_config.h"
#include "export/shell_args.h"
#include "fuzz_launch_job.h"
#include "spec/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "fuzz.sh", text(trainplan::fuzz::text_of(data, size));
  try {
    const trainplan::exporting::ShellArgs script = trainplan::exporting::parse_shell_args(text, file);
    if (const std::string config = script.value("--deepspeed_config").value_or(""); !config.empty()) {
      const auto written = script.written_files.find(config);
      if (written == script.written_files.end()) return 0;  // a file beside the script: not in these bytes
      trainplan::fuzz::expect_launch_job(trainplan::exporting::read_deepspeed(text, file, written->second, file + " (here-document)"));
    } else if (text.find("--tensor-model-parallel-size") != std::string::npos ||
               text.find("pretrain_gpt.py") != std::string::npos) {
      const trainplan::exporting::LaunchJob job = trainplan::exporting::read_megatron(text, file);
      trainplan::fuzz::expect_launch_job(job);
      // Megatron-LM requires both (megatron_config.cpp), and asserts async TP only with SP.
      FUZZ_EXPECT(job.workload.seq_len >= 1 && (!job.plan.overlap_tp_comm || job.plan.sp));
    }
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
