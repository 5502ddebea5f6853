#!/usr/bin/env bash
# Fetches NVIDIA's PTX assembler, fatbin writer and fatbin lister from PyPI, for
# tests/tests/payload_real.rs. Versions and sha256 are pinned; nothing NVIDIA-made is committed.
#   nvidia-cuda-nvcc-cu12 12.9.86   -> nvcc/nvidia/cuda_nvcc/bin/ptxas (sm_75..sm_120)
#   nvidia-nvfatbin-cu12 12.9.82    -> nvfatbin/nvidia/nvfatbin/lib/libnvfatbin.so.12 (the
#                                      library behind `fatbinary`; the CUDA 12 wheels do not ship
#                                      the fatbinary executable itself)
#   nvidia-cuda-cuobjdump 13.4.92   -> cuobjdump/nvidia/cu13/bin/cuobjdump (the reference reader)
# Usage: scripts/fetch-cuda-tools.sh [DEST]   (default: target/cuda-tools)
set -euo pipefail

dest="${1:-$(cd "$(dirname "$0")/.." && pwd)/target/cuda-tools}"
mkdir -p "$dest/dl"

wheels=(
    "nvidia-cuda-nvcc-cu12==12.9.86 nvcc 5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0"
    "nvidia-nvfatbin-cu12==12.9.82 nvfatbin 16cbfbd12287508212f22f42dff6ff51cf9b528b906f57f615b080da16dea1ea"
    "nvidia-cuda-cuobjdump==13.4.92 cuobjdump fb72ca80d0cdd8f5e8e232ce17d3c5aa2a37c3153bb8ef4e010010ed4fdef6c5"
)

for line in "${wheels[@]}"; do
    read -r spec dir sha <<<"$line"
    name="${spec%%==*}"
    version="${spec##*==}"
    file=$(ls "$dest/dl/${name//-/_}-${version}-"*.whl 2>/dev/null | head -n1 || true)
    if [ -z "$file" ]; then
        python3 -m pip download --quiet --no-deps --only-binary=:all: "$spec" -d "$dest/dl"
        file=$(ls "$dest/dl/${name//-/_}-${version}-"*.whl | head -n1)
    fi
    echo "$sha  $file" | sha256sum --check --quiet || { echo "fetch-cuda-tools: sha256 mismatch for $file" >&2; exit 1; }
    if [ ! -e "$dest/$dir/.unpacked-$version" ]; then
        rm -rf "${dest:?}/$dir"
        python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$file" "$dest/$dir"
        touch "$dest/$dir/.unpacked-$version"
    fi
done
chmod +x "$dest/nvcc/nvidia/cuda_nvcc/bin/ptxas" "$dest/cuobjdump/nvidia/cu13/bin/cuobjdump"
"$dest/nvcc/nvidia/cuda_nvcc/bin/ptxas" --version | tail -n1
echo "fetch-cuda-tools: tools in $dest"
