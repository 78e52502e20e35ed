#include "spec/json_value.h"

#include <nlohmann/json.hpp>

namespace trainplan::spec {

JsonValue::JsonValue() : value_(std::make_unique<nlohmann::json>(nlohmann::json::object())) {}
JsonValue::JsonValue(const JsonValue& other) : value_(std::make_unique<nlohmann::json>(*other.value_)) {}
JsonValue::JsonValue(JsonValue&& other) noexcept = default;
JsonValue& JsonValue::operator=(const JsonValue& other) {
  if (this != &other) value_ = std::make_unique<nlohmann::json>(*other.value_);
  return *this;
}
JsonValue& JsonValue::operator=(JsonValue&& other) noexcept = default;
JsonValue::~JsonValue() = default;

bool operator==(const JsonValue& a, const JsonValue& b) { return *a.value_ == *b.value_; }

}  // namespace trainplan::spec
