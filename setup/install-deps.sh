#!/usr/bin/env bash
# Installs the Debian 12 packages trainplan builds with, if any is missing.
# `setup/install-deps.sh fuzz` also installs clang and its libFuzzer runtime,
# which only setup/fuzz.sh needs.
set -euo pipefail
packages=(cmake g++ make ccache pkg-config libboost-graph-dev libboost-iostreams-dev
          libboost-system-dev libboost-filesystem-dev nlohmann-json3-dev libeigen3-dev
          libcli11-dev libgnuplot-iostream-dev gnuplot-nox libgtest-dev libopenblas-dev
          python3 python3-jsonschema libyaml-cpp-dev python3-dev pybind11-dev python3-pybind11
          libopenmpi-dev openmpi-bin libdnnl-dev
          python3-torch)  # tools/measure_gemm.py on CPU in ctest tools.measure_gemm (skipped without it)
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
