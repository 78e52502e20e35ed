// Renders a Table to a caller's stream in one of the four formats.
// text: title, aligned columns (numbers right), a rule under the header, notes.
// markdown: "### title", a pipe table with alignment row, notes as paragraphs.
// csv: one header row of machine keys (units in the names), raw SI numbers, no
//      title or notes, LF line ends. json: an array of objects keyed the same way,
//      raw numbers, null for empty or non-finite cells.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/json_document.h"
#include "report/table.h"

namespace trainplan::report {

void render_table(std::ostream& out, const Table& table, Format format);

// Several tables: one after another (a blank line between), or for json the
// versioned document of report/json_document.h. `format` is parsed by parse_format.
void render_tables(std::ostream& out, const std::vector<Table>& tables, const std::string& format,
                   const JsonDocument& document);

}  // namespace trainplan::report
