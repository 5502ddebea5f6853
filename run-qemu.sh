#!/usr/bin/env bash
# Builds the kernel and boots it once in QEMU with the serial port on this terminal.
# Default: PVH (QEMU -kernel) on q35; --iso boots GRUB under SeaBIOS, --uefi GRUB under OVMF.
# Installs missing host tools first (scripts/install-deps.sh). Exits 0 when the kernel reports
# success through isa-debug-exit, non-zero otherwise. All options: ./run-qemu.sh --help
#
#   ./run-qemu.sh                               # PVH, q35: the example application on a model
#                                               # GH100 (GSP-RM firmware, kernels compiled by clang-19)
#   ./run-qemu.sh --test                        # run the in-kernel tests and exit
#   ./run-qemu.sh --uefi --mem 2G --cpus 4 --gpu model:gh100
#   ./run-qemu.sh --vfio 0000:41:00.0           # a real GPU through VFIO (KVM host, see --help)
#   ./run-qemu.sh -- -d int -D qemu.trace       # extra QEMU arguments after --
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v cargo >/dev/null 2>&1; then
    echo "run-qemu.sh: cargo not found; install Rust (https://rustup.rs), then run this again" >&2
    exit 2
fi

# No arguments: the main job, the example application on the model GPU.
[ $# -eq 0 ] && set -- --app

groups=(qemu)
want_data=0
for arg in "$@"; do
    case "$arg" in
        --) break ;;
        -h|--help) exec cargo xtask run --help ;;
        --iso) groups+=(iso) ;;
        --uefi) groups+=(iso uefi) ;;
        --app) groups+=(cuda); want_data=1 ;;
        --firmware) want_data=1 ;;
    esac
done
bash scripts/install-deps.sh "${groups[@]}"
# GSP-RM firmware (Debian) and the boot ucodes extracted from NVIDIA's source: cached, re-checked.
[ "$want_data" = 1 ] && bash scripts/fetch-real-data.sh

exec cargo xtask run "$@"
