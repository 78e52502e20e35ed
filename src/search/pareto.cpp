#include "search/pareto.h"

#include <algorithm>
#include <numeric>

namespace trainplan::search {

std::vector<std::size_t> pareto_front(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return x[a] < x[b] || (x[a] == x[b] && y[a] < y[b]);
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    if (!(x[i] == x[i]) || !(y[i] == y[i])) continue;  // NaN: not comparable
    if (front.empty() || y[i] < y[front.back()]) front.push_back(i);
  }
  return front;
}

}  // namespace trainplan::search
