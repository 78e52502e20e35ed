// JsonReader: typed, validated access to one JSON document. Every failure
// throws SpecError(file, "$.json.path", what was expected), so a bad
// descriptor gives one precise line. Published figures may be written as
// {"value": x, "source": "..."}; sourced() insists on the source.
#pragma once
#include <initializer_list>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace trainplan::spec {

// Throws SpecError(file, path.key, ...) for the first key of `object` that is
// not in `known`, naming the closest known key ("did you mean kv_heads?").
// Keys ending in "note" or "notes" are free-text annotations and always pass.
void check_known_keys(const nlohmann::json& object, const std::string& file, const std::string& path,
                      const std::vector<std::string>& known);
inline void check_known_keys(const nlohmann::json& object, const std::string& file, const std::string& path,
                             std::initializer_list<const char*> known) {
  check_known_keys(object, file, path, std::vector<std::string>(known.begin(), known.end()));
}

class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const std::string& path, const std::string& expected) const;

  const nlohmann::json& field(const nlohmann::json& object, const std::string& path,
                              const std::string& key) const;
  bool has(const nlohmann::json& object, const std::string& key) const;
  const nlohmann::json& object(const nlohmann::json& object, const std::string& path,
                               const std::string& key) const;
  std::string string(const nlohmann::json& object, const std::string& path, const std::string& key) const;
  bool boolean(const nlohmann::json& object, const std::string& path, const std::string& key) const;
  // A number > 0 (or >= 0 when allow_zero), plain or as {"value": x, ...}.
  double positive(const nlohmann::json& object, const std::string& path, const std::string& key,
                  bool allow_zero = false) const;
  int positive_int(const nlohmann::json& object, const std::string& path, const std::string& key,
                   bool allow_zero = false) const;
  // A finite plain number (never the {"value": x} form) with lo < x <= hi, or
  // lo <= x <= hi when lo_inclusive. For figures whose source is kept
  // elsewhere: a fitted calibration, a measured-run row.
  double number(const nlohmann::json& object, const std::string& path, const std::string& key, double lo,
                double hi = std::numeric_limits<double>::infinity(), bool lo_inclusive = false) const;
  // A whole number from lo to hi, compared as the integer the file holds: 2.5
  // or 1e3 is refused, not cast, and 2^32 + 8 is refused, not wrapped to 8,
  // so a count in a file is never silently another count.
  int whole(const nlohmann::json& object, const std::string& path, const std::string& key, int lo, int hi) const;
  // Optional settings: an absent key is `fallback` (a plan field left out is
  // its usual default); a present one is held to whole() / boolean().
  int whole_or(const nlohmann::json& object, const std::string& path, const std::string& key, int fallback, int lo,
               int hi) const {
    return has(object, key) ? whole(object, path, key, lo, hi) : fallback;
  }
  bool boolean_or(const nlohmann::json& object, const std::string& path, const std::string& key,
                  bool fallback) const {
    return has(object, key) ? boolean(object, path, key) : fallback;
  }
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
