#include "spec/one_line.h"

namespace trainplan::spec {

std::string one_line(std::string_view text, std::size_t max_bytes) {
  const std::size_t kept = text.size() > max_bytes ? max_bytes : text.size();
  std::string out;
  out.reserve(kept + 16);
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < kept; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    else out += static_cast<char>(c);
  }
  if (kept < text.size()) out += "... (" + std::to_string(text.size() - kept) + " bytes more)";
  return out;
}

}  // namespace trainplan::spec
