// Fuzz target: a published-choice file read as `validate --choices DIR` reads
// each file (spec::parse_json_text, then validate::published_choice_from_json).
// The only refusal allowed is spec::SpecError; an accepted choice has a batch
// and at least one instance.
#include "fuzz_text.h"
#include <nlohmann/json.hpp>
#include "spec/error.h"
#include "spec/json_text.h"
#include "validate/measured_run.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "data/published-choices/fuzz.json";
  try {
    const auto choice =
        trainplan::validate::published_choice_from_json(trainplan::spec::parse_json_text(trainplan::fuzz::text_of(data, size), file), file);
    FUZZ_EXPECT(choice.plan.instances >= 1 && choice.workload.global_batch_seqs >= 1);
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
