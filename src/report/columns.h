// Column shorthands for the tables the commands build: a header, an optional
// machine key (empty: derived from the header, see Column::machine_key) and
// the number style each kind of figure is printed in.
#pragma once
#include <string>

#include "report/table.h"

namespace trainplan::report {

inline Column text_column(const std::string& header, const std::string& key = "") {
  return {header, "", NumberStyle::fixed, 0, Align::automatic, key};
}
inline Column count_column(const std::string& header, const std::string& key = "") {
  return {header, "", NumberStyle::integer, 0, Align::automatic, key};
}
inline Column share_column(const std::string& header, const std::string& key = "") {
  return {header, "", NumberStyle::percent, 1, Align::automatic, key};
}
// A figure with its SI unit, in engineering notation (the cell shows the unit).
inline Column measure_column(const std::string& header, const std::string& unit, const std::string& key = "") {
  return {header, unit, NumberStyle::engineering, 3, Align::automatic, key};
}

}  // namespace trainplan::report
