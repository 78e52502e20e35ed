#include "spec/utf8.h"

namespace trainplan::spec {

std::size_t first_non_utf8_byte(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = text[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The lead byte gives the length and narrows the first continuation byte.
    int more = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) more = 1;
    else if (c == 0xE0) more = 2, low = 0xA0;
    else if (c == 0xED) more = 2, high = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) more = 2;
    else if (c == 0xF0) more = 3, low = 0x90;
    else if (c == 0xF4) more = 3, high = 0x8F;
    else if (c >= 0xF1 && c <= 0xF3) more = 3;
    else return i;
    if (text.size() - i <= std::size_t(more)) return i;
    for (int k = 1; k <= more; ++k) {
      const unsigned char b = text[i + k];
      if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF)) return i;
    }
    i += std::size_t(more) + 1;
  }
  return std::string_view::npos;
}

}  // namespace trainplan::spec
