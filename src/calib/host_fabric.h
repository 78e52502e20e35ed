// This host as the instance an MPI run lies on, for `calibrate collectives`
// without --hardware: each rank is a device (one per chip) on a switched
// fabric whose per-rank link is the memcpy bandwidth each rank reached while
// all copied at once, so a collective share is "of a plain memcpy". No
// network between hosts (efa 0): a run across hosts needs a named --hardware.
#pragma once
#include "spec/hardware_spec.h"

namespace trainplan::calib {

spec::HardwareSpec host_fabric_hardware(int ranks_per_host, double copy_bytes_per_s);

}  // namespace trainplan::calib
