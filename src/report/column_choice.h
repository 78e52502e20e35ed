// Which columns a table shows: a person's narrow default view in text and
// markdown (Table::reading_view), every column in csv and json, or what
// --columns names ("all", or machine keys separated by commas). An unknown key
// throws SpecError naming it, the nearest known key and the table's keys.
#pragma once
#include <string>
#include <vector>

#include "report/table.h"

namespace trainplan::report {

std::vector<Table> choose_columns(std::vector<Table> tables, const std::string& format, const std::string& columns);

}  // namespace trainplan::report
