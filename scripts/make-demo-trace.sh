#!/usr/bin/env bash
# Rebuilds the bundled captures from the QEMU firmware (needs
# gcc-arm-none-eabi and qemu-system-arm; runs are byte-identical):
#   examples/traces/kws_leak.emt (+ .elf)  what `edgemem demo` analyses
#   examples/traces/kws_fragment.log       the same firmware's [MEM] text output
set -euo pipefail
cd "$(dirname "$0")/.."
examples/firmware/capture.sh leak examples/traces/kws_leak.emt
mv examples/traces/kws_leak.emt.elf examples/traces/kws_leak.elf
examples/firmware/capture.sh fragment examples/traces/kws_fragment.log text
rm -f examples/traces/kws_fragment.log.elf
