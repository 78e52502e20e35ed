// Fuzz target: a stack file read as `--stack FILE` reads it
// (spec::parse_json_text, then spec::stack_from_json). The only refusal allowed
// is spec::SpecError; an accepted stack offers something and has finite figures.
#include <cmath>
#include <nlohmann/json.hpp>

#include "fuzz_text.h"
#include "spec/error.h"
#include "spec/json_text.h"
#include "spec/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "stacks/fuzz.json";
  try {
    const trainplan::spec::Stack stack =
        trainplan::spec::stack_from_json(trainplan::spec::parse_json_text(trainplan::fuzz::text_of(data, size), file), file);
    FUZZ_EXPECT(!stack.capabilities.zero_stages.empty() && !stack.capabilities.recompute_modes.empty());
    for (const double figure : {stack.communication.dp_bucket_bytes, stack.memory.loss_bytes_per_logit,
                                stack.memory.runtime_reserve_bytes, stack.memory.allocator_overhead_fraction,
                                stack.compute.host_overhead_s})
      FUZZ_EXPECT(std::isfinite(figure) && figure >= 0);
    // What the allocator cannot give back is a part of what it reserves.
    FUZZ_EXPECT(stack.memory.allocator_unreleasable() <= stack.memory.allocator_overhead_fraction);
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
