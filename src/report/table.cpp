#include "report/table.h"

#include "spec/error.h"

namespace trainplan::report {

std::string Column::machine_key() const {
  if (!key.empty()) return key;
  const std::string base = snake_case(header);
  const std::string suffix = unit_key(unit);
  return suffix.empty() ? base : base + "_" + suffix;
}

std::string Column::human_header() const {
  if (unit.empty() || style == NumberStyle::engineering || style == NumberStyle::percent) return header;
  return header + " (" + unit + ")";
}

Table& Table::add_row(std::vector<Cell> cells) {
  if (cells.size() != columns.size()) {
    throw spec::SpecError("report::Table", title,
                          "a row of " + std::to_string(columns.size()) + " cells, not " + std::to_string(cells.size()));
  }
  rows.push_back(std::move(cells));
  return *this;
}

}  // namespace trainplan::report
