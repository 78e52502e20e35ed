// Reads and writes a Calibration file (data/calibration/*.json). Unknown
// sections (raw measurements, fit diagnostics, fitted_on) are kept verbatim
// in CalibrationFile::extra so a round trip loses nothing.
// Throws SpecError naming the file and JSON path of a bad field.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "spec/calibration.h"
#include "spec/json_value.h"

namespace trainplan::spec {

struct CalibrationFile {
  Calibration calibration;
  JsonValue extra;  // an object: measurements, fit, host, date, fitted_on
};

CalibrationFile calibration_from_json(const nlohmann::json& j, const std::string& file);
nlohmann::json calibration_to_json(const CalibrationFile& file);
CalibrationFile load_calibration(const std::string& path);
void save_calibration(const CalibrationFile& file, const std::string& path);

}  // namespace trainplan::spec
