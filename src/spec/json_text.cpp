#include "spec/json_text.h"

#include "spec/error.h"

namespace tp::spec {
namespace {

using json = nlohmann::json;

template <class... Input>
json parse(const std::string& file, Input&&... input) {
  // Called as each value starts or ends; `depth` counts the containers around it.
  const json::parser_callback_t limit_depth = [&file](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      throw SpecError(file, "", "expected JSON nested at most " + std::to_string(kMaxJsonDepth) + " levels deep");
    return true;
  };
  try {
    return json::parse(std::forward<Input>(input)..., limit_depth);
  } catch (const json::parse_error& e) {
    // Our words, not the library's: where the text stops being UTF-8 JSON.
    throw SpecError(file, "", "expected UTF-8 JSON; it is not valid at byte " + std::to_string(e.byte));
  } catch (const json::exception&) {
    throw SpecError(file, "", "expected JSON numbers that fit a double (one is out of range)");
  }
}

}  // namespace

json parse_json_text(std::string_view text, const std::string& file) { return parse(file, text.begin(), text.end()); }

}  // namespace tp::spec
