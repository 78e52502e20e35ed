// Hand-built HardwareSpec values for the net tests (the JSON loader is
// written elsewhere). Figures from /work/shared/reference/hardware-facts.md;
// the trn1 on-chip figure is an assumption (no public number found).
#pragma once
#include "spec/calibration.h"
#include "spec/hardware_spec.h"

namespace trainplan::net::testing {

inline spec::HardwareSpec trn1() {
  spec::HardwareSpec hw;
  hw.name = "trn1.32xlarge";
  hw.chips_per_instance = 16;
  hw.devices_per_chip = 2;
  hw.fabric = spec::FabricTopology::torus_2d;
  hw.torus_rows = 4;
  hw.torus_cols = 4;
  hw.link_bytes_per_s = 384e9 / 4;  // 384 GB/s per chip over 4 NeuronLink-v2 links
  hw.on_chip_bytes_per_s = 400e9;   // assumption: faster than any one link
  hw.efa_gbps = 800;
  return hw;
}

inline spec::HardwareSpec dl1() {
  spec::HardwareSpec hw;
  hw.name = "dl1.24xlarge";
  hw.chips_per_instance = 8;
  hw.devices_per_chip = 1;
  hw.fabric = spec::FabricTopology::all_to_all;
  hw.link_bytes_per_s = 12.5e9;  // one 100 GbE port to each of the 7 peers
  hw.efa_gbps = 400;
  return hw;
}

inline spec::HardwareSpec p4d() {
  spec::HardwareSpec hw;
  hw.name = "p4d.24xlarge";
  hw.chips_per_instance = 8;
  hw.devices_per_chip = 1;
  hw.fabric = spec::FabricTopology::switched;
  hw.chip_fabric_bytes_per_s = 300e9;  // NVSwitch: 600 GB/s bidirectional per GPU
  hw.efa_gbps = 400;
  return hw;
}

// Full line rate and no start-up cost, so tests see the graph's figures.
inline spec::CollectiveEfficiency ideal() {
  spec::CollectiveEfficiency e;
  e.intra_node = 1;
  e.inter_node = 1;
  e.step_latency_s = 0;
  return e;
}

}  // namespace trainplan::net::testing
