// Which price an instance-hour costs for one hardware: the user's own rate
// (--price-usd-hour HW=RATE or a prices file) before the descriptor's; the
// asked kind, else the first kind the descriptor lists (a note says so), else
// none (cost figures are not available, and a cost objective is refused).
#pragma once
#include <limits>
#include <map>
#include <string>

#include "spec/hardware_spec.h"

namespace trainplan::spec {

struct UserRate {
  double usd_per_instance_hour = 0;
  std::string from;  // "--price-usd-hour" or the prices file's path
};

struct PriceChoice {
  double usd_per_instance_hour = 0;  // 0: no price at all
  std::string kind;                  // the kind used ("user rate" for the user's own)
  std::string note;                  // why it is not the kind asked for; empty when it is
  bool available() const { return usd_per_instance_hour > 0; }
  // What the scorer prices with: NaN where there is no price, so every cost figure is "n/a".
  double rate_or_nan() const { return available() ? usd_per_instance_hour : std::numeric_limits<double>::quiet_NaN(); }
};

// "trn1.32xlarge=12.5,p5.48xlarge=55" (several flags add up); throws SpecError naming the flag.
void parse_user_rates(const std::string& text, std::map<std::string, UserRate>& rates);
// {"trn1.32xlarge": 12.5, "p5.48xlarge": {"usd_per_instance_hour": 55, "source": "..."}}; throws SpecError.
void load_user_rates(const std::string& file, std::map<std::string, UserRate>& rates);

PriceChoice choose_price(const HardwareSpec& hardware, const std::string& kind,
                         const std::map<std::string, UserRate>& user_rates);

}  // namespace trainplan::spec
