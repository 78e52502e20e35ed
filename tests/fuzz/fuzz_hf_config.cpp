// Fuzz target: a Hugging Face config.json read as `--model path/config.json`
// reads it (spec::parse_json_text, then spec::model_from_hf_config). The only
// refusal allowed is spec::SpecError; an accepted model has parameters.
#include "fuzz_text.h"
#include <nlohmann/json.hpp>
#include "spec/error.h"
#include "spec/json_text.h"
#include "spec/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "fuzz-model/config.json";
  try {
    const trainplan::spec::ModelSpec model =
        trainplan::spec::model_from_hf_config(trainplan::spec::parse_json_text(trainplan::fuzz::text_of(data, size), file), file);
    FUZZ_EXPECT(model.total_parameters() > 0);
    FUZZ_EXPECT(!model.name.empty());
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
