// Table: a titled grid of cells under typed columns, plus note lines. It holds
// raw values only (numbers in SI base units); how they look is the renderer's
// business (report/table_render.h). A cell is empty, text, or a number.
#pragma once
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "report/number_format.h"

namespace trainplan::report {

enum class Align { automatic, left, right };  // automatic: numbers right, text left

struct Column {
  std::string header;  // "step time"
  std::string unit;    // SI unit of raw numbers: "s", "B", "B/s", "FLOP/s", "tokens/s", "USD", or ""
  NumberStyle style = NumberStyle::fixed;
  int decimals = 2;
  Align align = Align::automatic;
  std::string key;     // machine name; empty: snake_case(header) + "_" + unit_key(unit)

  std::string machine_key() const;
  // The header a person reads: the unit is appended in parentheses unless each
  // cell already shows it (engineering) or the style implies it (percent).
  std::string human_header() const;
};

// A switch is a bool: people read "on"/"off", programs get true/false.
using Cell = std::variant<std::monostate, std::string, double, bool>;

struct Table {
  std::string key;    // machine name, fixed per command whatever the query: "best_plans" (JSON)
  std::string title;  // for people; may name the query
  // What the table is about when a command prints several under one key, as
  // name/value pairs: {"hardware", "trn1.32xlarge"} (JSON; the title says it for people).
  std::vector<std::pair<std::string, std::string>> scope;
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;  // each row has columns.size() cells
  std::vector<std::string> notes;       // footer lines: assumptions, sources
  // Machine keys of the columns a person's default view shows (text and
  // markdown; report/column_choice.h); empty: every column.
  std::vector<std::string> reading_view;

  // Appends a row; throws trainplan::spec::SpecError when its width is wrong.
  Table& add_row(std::vector<Cell> cells);
};

}  // namespace trainplan::report
