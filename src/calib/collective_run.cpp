#include "calib/collective_run.h"

namespace trainplan::calib {

const char* collective_name(net::Collective op) {
  switch (op) {
    case net::Collective::all_reduce: return "all_reduce";
    case net::Collective::all_gather: return "all_gather";
    case net::Collective::reduce_scatter: return "reduce_scatter";
    case net::Collective::point_to_point: return "sendrecv";
  }
  return "?";
}

bool parse_collective_name(const std::string& text, net::Collective& op) {
  for (net::Collective c : {net::Collective::all_reduce, net::Collective::all_gather, net::Collective::reduce_scatter,
                            net::Collective::point_to_point})
    if (text == collective_name(c)) {
      op = c;
      return true;
    }
  return false;
}

}  // namespace trainplan::calib
