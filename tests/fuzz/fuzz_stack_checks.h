// What the stack reader promises of a stack it accepts, shared by the stack and
// stack_file targets: something offered, finite figures at or above 0, an
// allocator whose unreleasable share lies within its overhead, and by_zero_stage
// entries only for stages offered, each stating stage fields, whose view
// (spec::at_zero_stage, what a plan at that stage sees) keeps the same promises.
#pragma once
#include <cmath>
#include <string>

#include "fuzz_text.h"
#include "spec/stack.h"

namespace trainplan::fuzz {

inline void expect_stack_view(const spec::Stack& stack) {
  FUZZ_EXPECT(!stack.capabilities.zero_stages.empty() && !stack.capabilities.recompute_modes.empty());
  for (const double figure : {stack.communication.dp_bucket_bytes, stack.memory.loss_bytes_per_logit,
                              stack.memory.runtime_reserve_bytes, stack.memory.allocator_overhead_fraction,
                              stack.compute.host_overhead_s})
    FUZZ_EXPECT(std::isfinite(figure) && figure >= 0);
  // What the allocator cannot give back is a part of what it reserves.
  FUZZ_EXPECT(stack.memory.allocator_unreleasable() <= stack.memory.allocator_overhead_fraction);
}

inline void expect_stack(const spec::Stack& stack) {
  expect_stack_view(stack);
  for (int stage = 0; stage < 4; ++stage) {
    const spec::ZeroStageFields& entry = stack.by_zero_stage[stage];
    if (!entry.values) {
      FUZZ_EXPECT(entry.keys.empty());
      continue;
    }
    FUZZ_EXPECT(stack.offers_zero(stage) && !entry.keys.empty());
    for (const std::string& key : entry.keys) FUZZ_EXPECT(spec::varies_by_zero_stage(key));
    expect_stack_view(spec::at_zero_stage(stack, stage));
  }
}

}  // namespace trainplan::fuzz
