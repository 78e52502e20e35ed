// Fuzz target: a calibration file read as `--calibration FILE` and
// `calibrate check` read it (spec::parse_json_text, then
// spec::calibration_from_json). The only refusal allowed is spec::SpecError; an
// accepted calibration written back (calibration_to_json) loads again unchanged.
#include "fuzz_text.h"
#include <nlohmann/json.hpp>
#include "spec/calibration_io.h"
#include "spec/error.h"
#include "spec/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "data/calibration/fuzz.json";
  trainplan::spec::CalibrationFile loaded;
  try {
    loaded = trainplan::spec::calibration_from_json(trainplan::spec::parse_json_text(trainplan::fuzz::text_of(data, size), file), file);
  } catch (const trainplan::spec::SpecError&) {
    return 0;
  }
  const trainplan::spec::CalibrationFile again = trainplan::spec::calibration_from_json(trainplan::spec::calibration_to_json(loaded), file);
  FUZZ_EXPECT(again.calibration.gemm.ceiling == loaded.calibration.gemm.ceiling);
  FUZZ_EXPECT(again.calibration.memory_by_op.size() == loaded.calibration.memory_by_op.size());
  FUZZ_EXPECT(again.extra == loaded.extra);
  return 0;
}
