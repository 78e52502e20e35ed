#include "spec/json_text.h"

#include <set>
#include <vector>
#include <nlohmann/json.hpp>

#include "spec/error.h"

namespace trainplan::spec {
namespace {

using json = nlohmann::json;

template <class... Input>
json parse(const std::string& file, Input&&... input) {
  // Called as each value starts or ends; `depth` counts the containers around it.
  // Each open container's keys so far ("[]" marks an array): a key given twice
  // in one object is refused, as Hydra and every careful loader refuse it,
  // rather than one of the two values winning unseen.
  struct Open {
    bool object = false;
    std::set<std::string> keys;
    std::string last_key;
  };
  std::vector<Open> open;
  const json::parser_callback_t check = [&file, &open](int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= kMaxJsonDepth)
      throw SpecError(file, "", "expected JSON nested at most " + std::to_string(kMaxJsonDepth) + " levels deep");
    if (event == E::object_start || event == E::array_start) open.push_back({event == E::object_start, {}, {}});
    if ((event == E::object_end || event == E::array_end) && !open.empty()) open.pop_back();
    if (event == E::key && !open.empty() && open.back().object) {
      const std::string key = parsed.get<std::string>();
      if (!open.back().keys.insert(key).second) {
        std::string path = "$";
        for (const Open& o : open) path += o.object ? (&o == &open.back() ? "." + key : "." + o.last_key) : "[]";
        throw SpecError(file, path, "each key once in its object; \"" + key + "\" is given twice");
      }
      open.back().last_key = key;
    }
    return true;
  };
  try {
    return json::parse(std::forward<Input>(input)..., check);
  } catch (const json::parse_error& e) {
    // Our words, not the library's: where the text stops being UTF-8 JSON.
    throw SpecError(file, "", "expected UTF-8 JSON; it is not valid at byte " + std::to_string(e.byte));
  } catch (const json::exception&) {
    throw SpecError(file, "", "expected JSON numbers that fit a double (one is out of range)");
  }
}

}  // namespace

json parse_json_text(std::string_view text, const std::string& file) { return parse(file, text.begin(), text.end()); }

}  // namespace trainplan::spec
