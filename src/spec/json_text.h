// JSON from the text of a file, as every loader reads it.
// Malformed text, a number too large for a double, nesting deeper than
// kMaxJsonDepth (our files nest a few levels; deeper only exhausts the stack
// of recursive copies), or a key given twice in one object (SpecError's field
// is its path) throws SpecError(file, field, what was expected).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace trainplan::spec {

inline constexpr int kMaxJsonDepth = 64;

nlohmann::json parse_json_text(std::string_view text, const std::string& file);

}  // namespace trainplan::spec
