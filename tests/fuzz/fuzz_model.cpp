// Fuzz target: a model descriptor read as `--model FILE` reads it (the JSON
// text parsed by spec::parse_json_text, then spec::model_from_json, which also
// takes a Hugging Face config.json that names its architectures). The only
// refusal allowed is spec::SpecError; an accepted model has parameters.
#include "fuzz_text.h"
#include <nlohmann/json.hpp>
#include "spec/error.h"
#include "spec/json_text.h"
#include "spec/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "models/fuzz.json";
  try {
    const trainplan::spec::ModelSpec model = trainplan::spec::model_from_json(trainplan::spec::parse_json_text(trainplan::fuzz::text_of(data, size), file), file);
    FUZZ_EXPECT(model.total_parameters() > 0);
    // A head is hidden / heads wide unless the file states head_dim (Qwen3:
    // 128 with hidden 4096 and 64 heads) or MLA sets its own widths.
    FUZZ_EXPECT(model.hidden % model.heads == 0 || model.explicit_head_dim > 0 || model.mla());
    FUZZ_EXPECT(model.heads % model.kv_heads == 0 && model.head_dim() > 0);
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
