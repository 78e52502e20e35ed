#include "report/column_choice.h"

#include <algorithm>
#include <set>

#include "spec/closest_name.h"
#include "spec/error.h"

namespace trainplan::report {
namespace {

std::vector<std::string> split_keys(const std::string& text) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end > start) keys.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return keys;
}

Table keep(const Table& table, const std::vector<std::string>& keys) {
  Table out = table;
  out.columns.clear();
  out.rows.assign(table.rows.size(), {});
  for (const std::string& key : keys)
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      if (table.columns[c].machine_key() == key) {
        out.columns.push_back(table.columns[c]);
        for (std::size_t r = 0; r < table.rows.size(); ++r) out.rows[r].push_back(table.rows[r][c]);
      }
  return out;
}

}  // namespace

std::vector<Table> choose_columns(std::vector<Table> tables, const std::string& format, const std::string& columns) {
  if (columns == "all") return tables;
  if (columns.empty()) {
    if (format != "text" && format != "markdown") return tables;
    for (Table& t : tables)
      if (!t.reading_view.empty()) t = keep(t, t.reading_view);
    return tables;
  }
  const std::vector<std::string> wanted = split_keys(columns);
  std::set<std::string> known_set;
  std::vector<std::string> known;
  for (const Table& t : tables)
    for (const Column& c : t.columns)
      if (known_set.insert(c.machine_key()).second) known.push_back(c.machine_key());
  for (const std::string& key : wanted)
    if (!known_set.count(key)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      const std::string guess = spec::closest_name(key, known);
      throw spec::SpecError("--columns", key,
                            "a column key" + (guess.empty() ? std::string() : " (did you mean " + guess + "?)") +
                                ": all, or keys separated by commas from: " + list);
    }
  // A table keeps the asked columns it has; one that has none of them is shown whole.
  for (Table& t : tables) {
    const Table narrowed = keep(t, wanted);
    if (!narrowed.columns.empty()) t = narrowed;
  }
  return tables;
}

}  // namespace trainplan::report
