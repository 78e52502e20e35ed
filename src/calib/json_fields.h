// Required fields of the calibration files calib writes and reads back
// (collective and GEMM calibrations): each accessor throws SpecError(file,
// "path.key", what was expected) for a missing or mistyped field.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace trainplan::calib {

const nlohmann::json& member(const nlohmann::json& j, const char* key, const std::string& file,
                             const std::string& path);
double positive_number(const nlohmann::json& j, const char* key, const std::string& file, const std::string& path);
// A whole number from lo to 2^24.
int whole(const nlohmann::json& j, const char* key, const std::string& file, const std::string& path, int lo);
std::string text(const nlohmann::json& j, const char* key, const std::string& file, const std::string& path);

}  // namespace trainplan::calib
