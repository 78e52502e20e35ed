// The known name a mistyped one most likely meant, for "did you mean" in a
// refusal: a known name the text begins (trn1 -> trn1.32xlarge), else the
// nearest by edit distance when it is close (at most a third of the text, at
// least 2 edits); empty when none is.
#pragma once
#include <string>
#include <vector>

namespace trainplan::spec {

std::size_t edit_distance(const std::string& a, const std::string& b);
std::string closest_name(const std::string& text, const std::vector<std::string>& known);

}  // namespace trainplan::spec
