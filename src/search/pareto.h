// Pareto front of points to minimise on both axes (time and cost to train):
// the indices of points no other point beats or equals on both, sorted by x.
// Ties on both axes keep the first index, so the result is deterministic.
#pragma once
#include <cstddef>
#include <vector>

namespace trainplan::search {

std::vector<std::size_t> pareto_front(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace trainplan::search
