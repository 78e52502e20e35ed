#include "spec/price_choice.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "spec/error.h"
#include "spec/json_reader.h"
#include "spec/json_text.h"
#include "spec/text_file.h"

namespace trainplan::spec {
namespace {

// A rate a person could be quoted: above zero and under $100,000 an instance-hour.
void check_rate(double rate, const std::string& where, const std::string& field) {
  if (!(std::isfinite(rate) && rate > 0 && rate < 1e5))
    throw SpecError(where, field, "a price in USD per instance-hour above 0 and below 100000");
}

}  // namespace

void parse_user_rates(const std::string& text, std::map<std::string, UserRate>& rates) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw SpecError("--price-usd-hour", "", "HARDWARE=USD_PER_INSTANCE_HOUR, e.g. trn1.32xlarge=12.5");
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    double rate = 0;
    std::size_t used = 0;
    try {
      rate = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size()) throw SpecError("--price-usd-hour", name, "a number of USD per instance-hour");
    check_rate(rate, "--price-usd-hour", name);
    rates[name] = {rate, "--price-usd-hour"};
    start = end + 1;
  }
}

void load_user_rates(const std::string& file, std::map<std::string, UserRate>& rates) {
  const nlohmann::json j = parse_json_text(read_text_file(file), file);
  JsonReader r(file);
  if (!j.is_object() || j.empty())
    r.fail("$", "an object of hardware names and prices, e.g. {\"trn1.32xlarge\": 12.5}");
  for (const auto& [name, value] : j.items()) {
    const std::string path = "$." + name;
    double rate = 0;
    if (value.is_number()) {
      rate = value.get<double>();
    } else if (value.is_object()) {
      r.only_keys(value, path, {"usd_per_instance_hour", "source"});
      rate = r.positive(value, path, "usd_per_instance_hour");
    } else {
      r.fail(path, "a number (USD per instance-hour) or {\"usd_per_instance_hour\": N, \"source\": \"...\"}");
    }
    check_rate(rate, file, path);
    rates[name] = {rate, file};
  }
}

PriceChoice choose_price(const HardwareSpec& hw, const std::string& kind, const std::map<std::string, UserRate>& user) {
  if (const auto it = user.find(hw.name); it != user.end())
    return {it->second.usd_per_instance_hour, "user rate", "price: the user's rate from " + it->second.from};
  if (const PriceQuote* q = hw.price(kind)) return {q->usd_per_instance_hour, kind, ""};
  if (hw.prices.empty())
    return {0, "no price listed", "price: " + hw.name + " lists none (" + hw.source_file +
                           "); cost figures are not available; --price-usd-hour " + hw.name + "=RATE sets one"};
  const PriceQuote& first = hw.prices.front();
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.2f", first.usd_per_instance_hour);
  return {first.usd_per_instance_hour, first.kind,
          "price: " + hw.name + " lists no " + kind + " price; its " + first.kind + " price ($" + rate +
              " an instance-hour) is used"};
}

}  // namespace trainplan::spec
