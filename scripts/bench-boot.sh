#!/usr/bin/env bash
# Boot timing under QEMU (TCG): wall time from starting QEMU to its exit on the PVH path, over
# N runs (default 5); prints each run and the median, with the kernel's `platform ready in N ms`.
# A measurement, never a test.
#
#   scripts/bench-boot.sh [N] [cargo xtask bench-boot options]
#   scripts/bench-boot.sh 10 --machine pc --append "test log=info"
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exec cargo xtask bench-boot --help ;;
esac
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    runs=$1
    shift
    set -- --runs "$runs" "$@"
fi
bash scripts/install-deps.sh qemu
exec cargo xtask bench-boot "$@"
