#include "spec/closest_name.h"

#include <algorithm>

namespace trainplan::spec {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string closest_name(const std::string& text, const std::vector<std::string>& known) {
  // Names are short; a long text is no typo of one (and would cost a large table).
  if (text.empty() || text.size() > 256) return {};
  std::string best;
  for (const std::string& k : known)
    if (k.size() > text.size() && k.compare(0, text.size(), text) == 0 && (best.empty() || k.size() < best.size()))
      best = k;
  if (!best.empty()) return best;
  std::size_t best_distance = std::max<std::size_t>(2, text.size() / 3) + 1;
  for (const std::string& k : known)
    if (const std::size_t d = edit_distance(text, k); d < best_distance) best_distance = d, best = k;
  return best;
}

}  // namespace trainplan::spec
