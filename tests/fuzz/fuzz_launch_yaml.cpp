// Fuzz target: a NeMo or NxD Training YAML as `--from-config job.yaml` reads it
// (read_launch_config's dispatch: YamlFields, then read_nxd with a
// distributed_strategy, else read_nemo with a model). A first line "#set A B ..."
// gives the words A, B ... as --set's Hydra overrides. The only refusal allowed is
// spec::SpecError; an accepted job keeps fuzz_launch_job.h's promises.
#include "export/nemo_config.h"
#include "export/nxd_config.h"
#include "export/yaml_fields.h"
#include "fuzz_launch_job.h"
#include "spec/error.h"

#include <sstream>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "fuzz.yaml", text(trainplan::fuzz::text_of(data, size));
  std::vector<std::string> overrides;
  if (text.rfind("#set ", 0) == 0) {
    std::istringstream words(text.substr(5, text.find('\n') - 5));
    for (std::string word; words >> word;) overrides.push_back(word);
  }
  try {
    trainplan::exporting::YamlFields fields(text, file);
    for (const std::string& item : overrides) fields.apply_override(item);
    if (fields.has("distributed_strategy")) {
      const trainplan::exporting::LaunchJob job = trainplan::exporting::read_nxd(text, file, overrides);
      trainplan::fuzz::expect_launch_job(job);
      FUZZ_EXPECT(job.plan.zero == 1 && job.workload.seq_len >= 1 && job.workload.global_batch_seqs >= 1);
    } else if (fields.has("model")) {
      const trainplan::exporting::LaunchJob job = trainplan::exporting::read_nemo(text, file, overrides);
      trainplan::fuzz::expect_launch_job(job);
      // NeMo switches sequence parallelism off at TP 1 (nemo_config.cpp), and its defaults fill the batch.
      FUZZ_EXPECT(!job.plan.sp || job.plan.tp > 1);
      FUZZ_EXPECT(job.workload.seq_len >= 1 && job.workload.global_batch_seqs >= 1);
    }
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
