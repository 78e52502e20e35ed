#include "cost/prices.h"

namespace trainplan::cost {

PriceFigures price_figures(const spec::PriceQuote& quote, double tokens_per_s, int instances,
                           double tokens_to_train) {
  PriceFigures f;
  f.kind = quote.kind;
  f.usd_per_instance_hour = quote.usd_per_instance_hour;
  f.usd_per_hour = quote.usd_per_instance_hour * instances;
  f.tokens_per_usd = tokens_per_s * 3600.0 / f.usd_per_hour;
  f.usd_per_million_tokens = 1e6 / f.tokens_per_usd;
  f.cost_to_train_usd = tokens_to_train / f.tokens_per_usd;
  return f;
}

std::vector<PriceFigures> price_figures(const spec::HardwareSpec& hardware, double tokens_per_s, int instances,
                                        double tokens_to_train) {
  std::vector<PriceFigures> out;
  for (const auto& quote : hardware.prices) out.push_back(price_figures(quote, tokens_per_s, instances, tokens_to_train));
  return out;
}

}  // namespace trainplan::cost
