// The tables `search` prints: its best plans ranked (with the memory fit and
// ties inside the held-out ranking band where bands are known), and where the
// leader's step time goes against a reference plan's.
#pragma once
#include <optional>
#include <string>

#include "cost/estimate.h"
#include "report/table.h"
#include "search/ranker.h"
#include "spec/error_bands.h"

namespace tp::report {

Table top_table(const search::SearchResult& result, const std::string& title, const search::Scorer& scorer,
                const std::string& price_kind, const std::optional<spec::ErrorBands>& bands);
// Where the leader's step time goes against the reference's: why they differ.
Table why_table(const cost::Estimate& leader, const cost::Estimate& reference, const std::string& title);

}  // namespace tp::report
