// The versioned JSON document every command prints under --format json:
//   {"schema": "trainplan/<command>/<version>", "query": {...}, "tables": [...]}
// No key depends on the query: the query is its own object, and each table is
// an object {"key", "title", "scope", "rows", "notes"} whose key is fixed per
// command. Schemas of each command's document live in data/schema/.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "report/table.h"

namespace trainplan::report {

struct JsonDocument {
  std::string command;  // "search"
  int version = 1;      // bumped when a key changes meaning or goes away
  std::string query_json = "{}";  // the query object, serialized in its key order
};

// "trainplan/search/1"
std::string schema_id(const JsonDocument& document);

// The document's head: schema and query.
nlohmann::ordered_json document_head(const JsonDocument& document);

// One table as an object; throws std::logic_error if it has no key (a bug of ours).
nlohmann::ordered_json table_object(const Table& table);

// The whole document: the head, then every table under "tables".
nlohmann::ordered_json tables_document(const JsonDocument& document, const std::vector<Table>& tables);

// tables_document as --format json prints it: two-space indents, a final newline.
void render_json_document(std::ostream& out, const JsonDocument& document, const std::vector<Table>& tables);

}  // namespace trainplan::report
