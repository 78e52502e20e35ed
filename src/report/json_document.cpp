#include "report/json_document.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "report/table_render.h"

namespace trainplan::report {

std::string schema_id(const JsonDocument& document) {
  return "trainplan/" + document.command + "/" + std::to_string(document.version);
}

nlohmann::ordered_json document_head(const JsonDocument& document) {
  nlohmann::ordered_json head = nlohmann::ordered_json::object();
  head["schema"] = schema_id(document);
  head["query"] = nlohmann::ordered_json::parse(document.query_json);
  return head;
}

nlohmann::ordered_json table_object(const Table& table) {
  if (table.key.empty()) throw std::logic_error("table '" + table.title + "' has no machine key");
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  object["key"] = table.key;
  object["title"] = table.title;
  nlohmann::ordered_json scope = nlohmann::ordered_json::object();
  for (const auto& [name, value] : table.scope) scope[name] = value;
  object["scope"] = std::move(scope);
  std::ostringstream rows;
  render_table(rows, table, Format::json);
  object["rows"] = nlohmann::ordered_json::parse(rows.str());
  object["notes"] = table.notes;
  return object;
}

nlohmann::ordered_json tables_document(const JsonDocument& document, const std::vector<Table>& tables) {
  nlohmann::ordered_json doc = document_head(document);
  doc["tables"] = nlohmann::ordered_json::array();
  for (const Table& t : tables) doc["tables"].push_back(table_object(t));
  return doc;
}

void render_json_document(std::ostream& out, const JsonDocument& document, const std::vector<Table>& tables) {
  out << tables_document(document, tables).dump(2) << "\n";
}

}  // namespace trainplan::report
