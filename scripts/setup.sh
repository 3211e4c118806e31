#!/usr/bin/env bash
# Installs the Debian packages edgemem builds and tests with, if any is missing.
set -euo pipefail
packages=(cmake ninja-build g++ clang libclang-rt-14-dev libgtest-dev libbenchmark-dev
          libcli11-dev libfmt-dev nlohmann-json3-dev libflatbuffers-dev libdw-dev libunwind-dev libzstd-dev pkg-config python3 python3-jsonschema time xz-utils zlib1g-dev liblzma-dev
          libprotobuf-dev protobuf-compiler libcpp-httplib-dev prometheus bpftrace
          gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi qemu-system-arm chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm (the HTML report's chart library is installed with npm at build
# time): Debian's packages, unless a node that brings its own npm (such as
# NodeSource's nodejs, which conflicts with Debian's npm) is already there.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
