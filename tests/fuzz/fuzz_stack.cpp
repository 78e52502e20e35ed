// Fuzz target: a stack file's JSON as spec::stack_from_json reads it (after
// spec::parse_json_text; the file path, "extends" included, is stack_file's).
// The only refusal allowed is spec::SpecError; an accepted stack holds what
// fuzz_stack_checks.h says.
#include <nlohmann/json.hpp>

#include "fuzz_stack_checks.h"
#include "fuzz_text.h"
#include "spec/error.h"
#include "spec/json_text.h"
#include "spec/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "stacks/fuzz.json";
  try {
    trainplan::fuzz::expect_stack(trainplan::spec::stack_from_json(
        trainplan::spec::parse_json_text(trainplan::fuzz::text_of(data, size), file), file));
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
