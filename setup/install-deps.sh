#!/usr/bin/env bash
# Installs the Debian 12 packages trainplan builds with, if any is missing.
# `setup/install-deps.sh core`: only what the program and its Python module need
#   (setup/quickstart.sh);
# `setup/install-deps.sh` (all): also what the tests and the optional backends use:
#   MPI for `calibrate collectives`, oneDNN and OpenBLAS for the kernel comparisons,
#   PyTorch for tools/measure_gemm.py, jsonschema for the output schemas;
# `setup/install-deps.sh fuzz`: all, plus clang and its libFuzzer runtime (setup/fuzz.sh).
set -euo pipefail
packages=(cmake g++ make ccache pkg-config libboost-graph-dev libboost-iostreams-dev
          libboost-system-dev libboost-filesystem-dev nlohmann-json3-dev libeigen3-dev
          libcli11-dev libgnuplot-iostream-dev gnuplot-nox libgtest-dev libyaml-cpp-dev
          python3 python3-dev pybind11-dev python3-pybind11)
if [ "${1:-all}" != core ]; then
  packages+=(libopenblas-dev python3-jsonschema libopenmpi-dev openmpi-bin libdnnl-dev
             python3-torch)  # tools/measure_gemm.py on CPU in ctest tools.measure_gemm (skipped without it)
fi
if [ "${1:-}" = fuzz ]; then packages+=(clang libclang-rt-14-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
