// Fuzz target: a measured-run file read as `validate --measured DIR` reads
// each file (spec::parse_json_text, then validate::measured_runs_from_json).
// The only refusal allowed is spec::SpecError; accepted rows have distinct ids,
// at least one instance and a positive figure, memory or out-of-memory outcome.
#include <set>
#include <nlohmann/json.hpp>

#include "fuzz_text.h"
#include "spec/error.h"
#include "spec/json_text.h"
#include "validate/measured_run.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "data/measured/fuzz.json";
  try {
    const auto runs =
        trainplan::validate::measured_runs_from_json(trainplan::spec::parse_json_text(trainplan::fuzz::text_of(data, size), file), file);
    FUZZ_EXPECT(!runs.empty());
    std::set<std::string> ids;
    for (const auto& run : runs) {
      FUZZ_EXPECT(ids.insert(run.id).second);
      FUZZ_EXPECT(run.plan.instances >= 1 && run.workload.seq_len >= 1);
      FUZZ_EXPECT(run.out_of_memory || run.measured_value > 0 || run.memory);
    }
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
