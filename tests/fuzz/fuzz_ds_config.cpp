// Fuzz target: a DeepSpeed ds_config JSON as `--from-config ds_config.json` reads
// it, with no script (read_deepspeed("", ..., text, ...)). The only refusal
// allowed is spec::SpecError; an accepted job keeps fuzz_launch_job.h's promises
// and, with no script, states no cluster, parallelism or architecture.
#include "export/deepspeed_config.h"
#include "fuzz_launch_job.h"
#include "spec/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "fuzz.ds_config.json";
  try {
    const trainplan::exporting::LaunchJob job =
        trainplan::exporting::read_deepspeed("", file, std::string(trainplan::fuzz::text_of(data, size)), file);
    trainplan::fuzz::expect_launch_job(job);
    FUZZ_EXPECT(!job.has_architecture && job.instances == 0 && job.plan.tp == 1 && job.plan.pp == 1);
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
