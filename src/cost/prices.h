// Money: tokens per dollar, dollars per million tokens and cost to train for
// each price kind the hardware lists, from an Estimate's throughput.
// tokens per USD = tokens/s x 3600 / (instances x USD per instance-hour).
#pragma once
#include <vector>

#include "cost/estimate.h"
#include "spec/hardware_spec.h"
#include "spec/workload.h"

namespace trainplan::cost {

PriceFigures price_figures(const spec::PriceQuote& quote, double tokens_per_s, int instances, double tokens_to_train);
std::vector<PriceFigures> price_figures(const spec::HardwareSpec& hardware, double tokens_per_s, int instances,
                                        double tokens_to_train);

}  // namespace trainplan::cost
