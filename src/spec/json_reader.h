// JsonReader: typed, validated access to one JSON document. Every failure
// throws SpecError(file, "$.json.path", what was expected), so a bad
// descriptor gives one precise line. Published figures may be written as
// {"value": x, "source": "..."}; sourced() insists on the source.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace trainplan::spec {

// Throws SpecError(file, path.key, ...) for the first key of `object` that is
// not in `known`, naming the closest known key ("did you mean kv_heads?").
// Keys ending in "note" or "notes" are free-text annotations and always pass.
void check_known_keys(const nlohmann::json& object, const std::string& file, const std::string& path,
                      std::initializer_list<const char*> known);

class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const std::string& path, const std::string& expected) const;

  const nlohmann::json& field(const nlohmann::json& object, const std::string& path,
                              const std::string& key) const;
  bool has(const nlohmann::json& object, const std::string& key) const {
    return object.is_object() && object.contains(key);
  }
  const nlohmann::json& object(const nlohmann::json& object, const std::string& path,
                               const std::string& key) const;
  std::string string(const nlohmann::json& object, const std::string& path, const std::string& key) const;
  bool boolean(const nlohmann::json& object, const std::string& path, const std::string& key) const;
  // A number > 0 (or >= 0 when allow_zero), plain or as {"value": x, ...}.
  double positive(const nlohmann::json& object, const std::string& path, const std::string& key,
                  bool allow_zero = false) const;
  int positive_int(const nlohmann::json& object, const std::string& path, const std::string& key,
                   bool allow_zero = false) const;
  // Like positive(), but the figure must be {"value": x, "source": "..."}.
  double sourced(const nlohmann::json& object, const std::string& path, const std::string& key,
                 bool allow_zero = false) const;
  void only_keys(const nlohmann::json& object, const std::string& path,
                 std::initializer_list<const char*> known) const {
    check_known_keys(object, file_, path, known);
  }
  // One of a fixed set of words; the message lists them.
  std::string choice(const nlohmann::json& object, const std::string& path, const std::string& key,
                     std::initializer_list<const char*> allowed) const;

 private:
  double number_at(const nlohmann::json& value, const std::string& path, bool allow_zero) const;
  std::string file_;
};

}  // namespace trainplan::spec
