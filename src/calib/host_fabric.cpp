#include "calib/host_fabric.h"

#include <string>

namespace trainplan::calib {

spec::HardwareSpec host_fabric_hardware(int ranks_per_host, double copy_bytes_per_s) {
  spec::HardwareSpec hw;
  hw.name = "host";
  hw.family = "host";
  hw.source_file = "host (" + std::to_string(ranks_per_host) + " MPI ranks, measured memcpy bandwidth)";
  hw.accelerator = "host CPU (MPI ranks over shared memory)";
  hw.chips_per_instance = ranks_per_host;
  hw.devices_per_chip = 1;
  hw.fabric = spec::FabricTopology::switched;
  hw.chip_fabric_bytes_per_s = copy_bytes_per_s;
  hw.fabric_latency_s = 0;  // all of the start-up cost is MPI's: the fitted step latency
  return hw;
}

}  // namespace trainplan::calib
