// JsonValue: one nlohmann::json owned by value, for a struct whose header
// includes only <nlohmann/json_fwd.hpp>. Reach the value through * and ->
// (`(*file.extra)["fit"]`, `file.extra->contains("host")`). A default one
// holds an empty object; copies are deep and == compares the values. A
// moved-from JsonValue may only be assigned to or destroyed.
#pragma once
#include <memory>
#include <nlohmann/json_fwd.hpp>

namespace trainplan::spec {

class JsonValue {
 public:
  JsonValue();  // {}
  JsonValue(const JsonValue& other);
  JsonValue(JsonValue&& other) noexcept;
  JsonValue& operator=(const JsonValue& other);
  JsonValue& operator=(JsonValue&& other) noexcept;
  ~JsonValue();

  nlohmann::json& operator*() { return *value_; }
  const nlohmann::json& operator*() const { return *value_; }
  nlohmann::json* operator->() { return value_.get(); }
  const nlohmann::json* operator->() const { return value_.get(); }

  friend bool operator==(const JsonValue& a, const JsonValue& b);

 private:
  std::unique_ptr<nlohmann::json> value_;
};

}  // namespace trainplan::spec
