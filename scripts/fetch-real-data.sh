#!/usr/bin/env bash
# Fetch the real artifacts the conformance tests read (see ../shared/REAL_DATA.md):
#   - NVIDIA's open-gpu-kernel-modules 535.261.03 source (headers), from Debian's contrib deb-src;
#   - firmware-nvidia-gsp 535.261.03-1 (GSP-RM firmware), from bookworm non-free-firmware;
#   - firmware-nvidia-graphics (booter/bootloader images), from bookworm-backports;
#   - the boot ucodes of the pinned release (booters, GSP bootloaders, Turing's generic falcon
#     bootloader, Hopper's GSP-FMC), extracted from the source tree's g_bindata_*.c arrays by the
#     project's own `cargo xtask extract-firmware` into target/real-data/extracted-535.261.03/;
#   - Debian's linux-source-7.2 7.2.13-1 (sid, pinned sha256; 164 MB .deb), of which only
#     nouveau's and Nova's NVIDIA-derived headers and tables are unpacked (LINUX_PATHS below): a
#     second source for Blackwell facts; fetched through a private apt configuration under
#     target/real-data/apt-sid, so that the machine's own apt never sees sid;
#   - PyPI's tinygrad 0.14.0 wheel (pinned sha256), for `tinygrad/runtime/autogen/nv_570.py`:
#     QMD layouts generated from NVIDIA's headers, which tests/tests/qmd_layout.rs reads;
#   - optionally, upstream sources Debian does not carry, for facts 535.261.03 predates
#     (Blackwell) and QMD layouts: NVIDIA/open-gpu-kernel-modules at tag 570.133.07 and
#     NVIDIA/open-gpu-doc at a pinned commit, from local git clones named by OGKM_GIT /
#     OPEN_GPU_DOC_GIT. Debian carries neither (its newest NVIDIA source, nvidia-open-kernel-source
#     550.163.01 in sid, is only kernel-open/ and predates Blackwell); without the clones the
#     tests for those facts record a skip naming the fact groups, which `cargo xtask test` lists.
# Idempotent: everything is cached under target/real-data/ and checked by version and sha256;
# a second run only re-checks. Needs root (it adds an apt sources file) on Debian bookworm.
# NVIDIA-licensed files stay in target/ and are never committed.
# Exit status: 0 when everything is in place; non-zero (after doing all it can) otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="$ROOT/target/real-data"
SOURCES_FILE=/etc/apt/sources.list.d/gpu-runtime-real-data.sources
DEBIAN_SOURCES=/etc/apt/sources.list.d/debian.sources

OGKM_VERSION=535.261.03
OGKM_TARBALL="nvidia-open-gpu-kernel-modules_${OGKM_VERSION}.orig.tar.xz"
OGKM_SHA256=14f64f53694d4a580ea68a561db02c2a8847790087a86f50fd2f40eac3eebb8f
OGKM_DIR="$DATA/open-gpu-kernel-modules-${OGKM_VERSION}"
GSP_PKG_VERSION=535.261.03-1
GSP_DEB_SHA256=ac2e9b2a90a7ba9475ab65d765db781b9c6fc6c6e8c5c838ca911fa1e9939843
GRAPHICS_PKG_VERSION=20250410-2~bpo12+1
GRAPHICS_DEB_SHA256=b0a9c7b89668095b0c44d197ac7a0cce280c1aca1b41bf4469a474282e37dfb0
GSP_DIR="$DATA/firmware-nvidia-gsp"
EXTRACTED_DIR="$DATA/extracted-${OGKM_VERSION}"
GRAPHICS_DIR="$DATA/firmware-nvidia-graphics"
UPSTREAM_OGKM_TAG=570.133.07
UPSTREAM_OGKM_DIR="$DATA/open-gpu-kernel-modules-${UPSTREAM_OGKM_TAG}"
OPEN_GPU_DOC_COMMIT=c8607fe576b53ff821ffcf97e7548d2de11c4eaf
LINUX_PKG=linux-source-7.2
LINUX_PKG_VERSION=7.2.13-1
LINUX_DEB_SHA256=30a8c5fc63f9028a62e6d7b3f7f43bee67425dbce2a05fceba83f9b87c92083d
LINUX_DIR="$DATA/${LINUX_PKG}_${LINUX_PKG_VERSION}"
# nouveau's excerpts of NVIDIA's register headers and its class numbers, Nova's chip table (see
# drivers/gpu/src/hw/headers.rs, LINUX_SOURCE), and the r570 RM headers/bindings both carry.
LINUX_PATHS="drivers/gpu/drm/nouveau/include/nvhw drivers/gpu/drm/nouveau/include/nvif/class.h drivers/gpu/nova-core/gpu.rs drivers/gpu/nova-core/regs.rs drivers/gpu/nova-core/gsp/fw drivers/gpu/drm/nouveau/nvkm/subdev/gsp/rm/r570/nvrm"
SID_APT="$DATA/apt-sid"
TINYGRAD_VERSION=0.14.0
TINYGRAD_WHEEL="tinygrad-${TINYGRAD_VERSION}-py3-none-any.whl"
TINYGRAD_SHA256=d2a5bea33c637fdf105963632329876b3d3253d38295ac1ffd2ff81646d93be3
TINYGRAD_DIR="$DATA/tinygrad-${TINYGRAD_VERSION}"
# Only this file of the wheel is read (see drivers/gpu/src/hw/headers.rs, TINYGRAD_NV_570).
TINYGRAD_FILE=tinygrad/runtime/autogen/nv_570.py
OPEN_GPU_DOC_DIR="$DATA/open-gpu-doc-${OPEN_GPU_DOC_COMMIT}"
# Only these parts of the upstream trees are needed (headers, class lists, README table).
UPSTREAM_OGKM_PATHS="README.md version.mk src/common/inc/swref/published src/common/sdk/nvidia/inc/class src/nvidia/arch/nvalloc/common/inc src/nvidia/generated/g_gpu_class_list.c"
OPEN_GPU_DOC_PATHS="classes"

say() { printf 'fetch-real-data: %s\n' "$*"; }
die() { printf 'fetch-real-data: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it adds $SOURCES_FILE and runs apt-get update)"
command -v apt-get >/dev/null || die "apt-get not found: this script expects Debian bookworm"
mkdir -p "$DATA"

# 1. apt sources: contrib/non-free/non-free-firmware, deb-src, bookworm-backports.
if [ -f "$SOURCES_FILE" ]; then
    say "apt sources file already present: $SOURCES_FILE"
else
    mirror=""
    if [ -f "$DEBIAN_SOURCES" ]; then
        # The first URIs line that is not the security archive is the machine's Debian mirror.
        mirror="$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$DEBIAN_SOURCES")"
    fi
    if [ -z "$mirror" ]; then
        mirror=http://deb.debian.org/debian
        say "no mirror found in $DEBIAN_SOURCES; using $mirror"
    fi
    cat >"$SOURCES_FILE" <<SRC
Types: deb deb-src
URIs: $mirror
Suites: bookworm bookworm-backports
Components: main contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    say "added $SOURCES_FILE (mirror $mirror)"
fi

updated=0
apt_update() {
    if [ "$updated" -eq 0 ]; then
        say "apt-get update"
        apt-get update -qq
        updated=1
    fi
}

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

# 2. NVIDIA's open source tree (headers).
if [ -f "$OGKM_DIR/.extracted" ]; then
    say "open-gpu-kernel-modules $OGKM_VERSION already extracted: $OGKM_DIR"
else
    if ! sha_ok "$DATA/$OGKM_TARBALL" "$OGKM_SHA256"; then
        apt_update
        say "apt-get source --download-only nvidia-open-gpu-kernel-modules=$OGKM_VERSION-1"
        # It exits non-zero because the Debian part is missing on the mirror; the tarball's
        # sha256 is what tells success.
        (cd "$DATA" && apt-get source --download-only "nvidia-open-gpu-kernel-modules=$OGKM_VERSION-1" ) || true
        sha_ok "$DATA/$OGKM_TARBALL" "$OGKM_SHA256" \
            || die "$DATA/$OGKM_TARBALL missing or sha256 is not $OGKM_SHA256"
    fi
    say "extracting $OGKM_TARBALL"
    rm -rf "$OGKM_DIR.tmp"
    mkdir -p "$OGKM_DIR.tmp"
    tar -xJf "$DATA/$OGKM_TARBALL" -C "$OGKM_DIR.tmp" --strip-components=1
    rm -rf "$OGKM_DIR"
    mv "$OGKM_DIR.tmp" "$OGKM_DIR"
    touch "$OGKM_DIR/.extracted"
    say "extracted to $OGKM_DIR"
fi

# 3 and 4. Firmware packages, pinned by version and sha256: $1 = package, $2 = version,
#    $3 = sha256 of the .deb, $4 = directory to unpack into.
fetch_deb() {
    local pkg="$1" version="$2" sha="$3" dir="$4" deb
    if [ -f "$dir/.extracted-$version" ]; then
        say "$pkg $version already extracted: $dir"
        return 0
    fi
    deb="$(ls "$DATA/${pkg}_$(printf '%s' "$version" | sed 's/:/%3a/')"_*.deb 2>/dev/null | head -n1 || true)"
    if [ -z "$deb" ] || ! sha_ok "$deb" "$sha"; then
        apt_update
        say "apt-get download $pkg=$version"
        (cd "$DATA" && apt-get download "$pkg=$version")
        deb="$(ls "$DATA/${pkg}_"*.deb | grep -F "_${version}_" | head -n1)"
    fi
    sha_ok "$deb" "$sha" || die "$deb: sha256 is not $sha"
    rm -rf "$dir"
    dpkg-deb -x "$deb" "$dir"
    touch "$dir/.extracted-$version"
    say "extracted $(basename "$deb") to $dir"
}

fetch_deb firmware-nvidia-gsp "$GSP_PKG_VERSION" "$GSP_DEB_SHA256" "$GSP_DIR"
fetch_deb firmware-nvidia-graphics "$GRAPHICS_PKG_VERSION" "$GRAPHICS_DEB_SHA256" "$GRAPHICS_DIR"

# 5. The pinned release's boot ucodes, from NVIDIA's source by `cargo xtask extract-firmware`
#    (checked against the arrays' size comments and parsed back by the driver's parsers). It
#    rewrites only files whose bytes changed, so a second run changes nothing. Under sudo it runs
#    as the calling user, so that target/ stays theirs.
extract_firmware() {
    mkdir -p "$EXTRACTED_DIR"
    if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
        chown -R "$SUDO_USER" "$EXTRACTED_DIR"
        sudo -u "$SUDO_USER" -H bash -lc 'cd "$1" && cargo xtask extract-firmware --source "$2" --out "$3"' \
            extract "$ROOT" "$OGKM_DIR" "$EXTRACTED_DIR"
    else
        command -v cargo >/dev/null || { say "cargo not found (needed for cargo xtask extract-firmware)"; return 1; }
        (cd "$ROOT" && cargo xtask extract-firmware --source "$OGKM_DIR" --out "$EXTRACTED_DIR")
    fi
}
say "extracting the $OGKM_VERSION boot ucodes from $OGKM_DIR"
extract_firmware || die "cargo xtask extract-firmware failed: the $OGKM_VERSION boot ucodes are missing from $EXTRACTED_DIR"
[ -f "$EXTRACTED_DIR/.extracted" ] || die "$EXTRACTED_DIR/.extracted missing after cargo xtask extract-firmware"

# 6. linux-source-7.2 from sid, through its own apt configuration (nothing added to the
#    machine's sources); only LINUX_PATHS are unpacked from the kernel tarball.
sid_apt() {
    local mirror=""
    if [ -f "$DEBIAN_SOURCES" ]; then
        mirror="$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$DEBIAN_SOURCES")"
    fi
    mirror="${mirror:-http://deb.debian.org/debian}"
    mkdir -p "$SID_APT/lists/partial" "$SID_APT/cache/archives/partial"
    printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s sid main\n' "$mirror" >"$SID_APT/sources.list"
    apt-get -o Dir::Etc::SourceList="$SID_APT/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
        -o Dir::State::Lists="$SID_APT/lists" -o Dir::Cache="$SID_APT/cache" -o Dir::State::Status=/dev/null "$@"
}
if [ -f "$LINUX_DIR/.extracted-$LINUX_PKG_VERSION" ]; then
    say "$LINUX_PKG $LINUX_PKG_VERSION already extracted: $LINUX_DIR"
else
    linux_deb="$DATA/${LINUX_PKG}_${LINUX_PKG_VERSION}_all.deb"
    if ! sha_ok "$linux_deb" "$LINUX_DEB_SHA256"; then
        say "apt-get update (sid, private configuration in $SID_APT)"
        sid_apt update -qq
        say "apt-get download $LINUX_PKG=$LINUX_PKG_VERSION (sid)"
        (cd "$DATA" && sid_apt download "$LINUX_PKG=$LINUX_PKG_VERSION")
    fi
    sha_ok "$linux_deb" "$LINUX_DEB_SHA256" || die "$linux_deb missing or sha256 is not $LINUX_DEB_SHA256"
    rm -rf "$LINUX_DIR.tmp"
    mkdir -p "$LINUX_DIR.tmp"
    # shellcheck disable=SC2086
    dpkg-deb --fsys-tarfile "$linux_deb" | tar -xO "./usr/src/$LINUX_PKG.tar.xz" \
        | tar -xJ -C "$LINUX_DIR.tmp" --strip-components=1 $(printf "$LINUX_PKG/%s " $LINUX_PATHS)
    [ -f "$LINUX_DIR.tmp/drivers/gpu/nova-core/gpu.rs" ] || die "$linux_deb: drivers/gpu/nova-core/gpu.rs missing"
    rm -rf "$LINUX_DIR"
    mv "$LINUX_DIR.tmp" "$LINUX_DIR"
    touch "$LINUX_DIR/.extracted-$LINUX_PKG_VERSION"
    say "extracted $LINUX_PATHS from $(basename "$linux_deb") to $LINUX_DIR"
fi

# 7. tinygrad's wheel from PyPI (pinned version and sha256); only nv_570.py is unpacked.
if [ -f "$TINYGRAD_DIR/.extracted-$TINYGRAD_VERSION" ]; then
    say "tinygrad $TINYGRAD_VERSION already extracted: $TINYGRAD_DIR"
else
    if ! sha_ok "$DATA/$TINYGRAD_WHEEL" "$TINYGRAD_SHA256"; then
        python3 -m pip --version >/dev/null 2>&1 || die "python3 -m pip not found (needed for PyPI's tinygrad $TINYGRAD_VERSION)"
        say "pip download tinygrad==$TINYGRAD_VERSION"
        python3 -m pip download --quiet --no-deps --only-binary=:all: "tinygrad==$TINYGRAD_VERSION" -d "$DATA"
    fi
    sha_ok "$DATA/$TINYGRAD_WHEEL" "$TINYGRAD_SHA256" \
        || die "$DATA/$TINYGRAD_WHEEL missing or sha256 is not $TINYGRAD_SHA256"
    rm -rf "$TINYGRAD_DIR"
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])' \
        "$DATA/$TINYGRAD_WHEEL" "$TINYGRAD_FILE" "$TINYGRAD_DIR"
    touch "$TINYGRAD_DIR/.extracted-$TINYGRAD_VERSION"
    say "extracted $TINYGRAD_FILE to $TINYGRAD_DIR"
fi

# 8. Optional upstream trees from local clones: $1 = repo, $2 = ref, $3 = dir, $4 = git clone
#    (may be empty), $5 = paths to keep, $6 = a file that must exist afterwards.
fetch_upstream() {
    local repo="$1" ref="$2" dir="$3" clone="$4" paths="$5" check="$6" tmp
    if [ -f "$dir/.extracted" ]; then
        say "$repo $ref already extracted: $dir"
        return 0
    fi
    tmp="$dir.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    if [ -n "$clone" ]; then
        say "git archive $ref from $clone"
        # shellcheck disable=SC2086
        git -C "$clone" archive --format=tar "$ref" -- $paths | tar -x -C "$tmp" || { rm -rf "$tmp"; return 1; }
    else
        say "$repo $ref: no local clone given; facts cited from it stay unverified here"
        rm -rf "$tmp"
        return 1
    fi
    if [ ! -f "$tmp/$check" ]; then
        say "$repo $ref: $check missing after extraction"
        rm -rf "$tmp"
        return 1
    fi
    rm -rf "$dir"
    mv "$tmp" "$dir"
    echo "$ref" >"$dir/.extracted"
    say "extracted $repo $ref to $dir"
}

missing=""
if ! fetch_upstream NVIDIA/open-gpu-kernel-modules "$UPSTREAM_OGKM_TAG" "$UPSTREAM_OGKM_DIR" \
        "${OGKM_GIT:-}" "$UPSTREAM_OGKM_PATHS" src/common/inc/swref/published/blackwell/gb202/dev_therm.h; then
    missing="$missing open-gpu-kernel-modules-$UPSTREAM_OGKM_TAG"
elif ! grep -q "NVIDIA_VERSION = $UPSTREAM_OGKM_TAG" "$UPSTREAM_OGKM_DIR/version.mk"; then
    say "$UPSTREAM_OGKM_DIR/version.mk is not $UPSTREAM_OGKM_TAG"
    missing="$missing open-gpu-kernel-modules-$UPSTREAM_OGKM_TAG"
fi
if ! fetch_upstream NVIDIA/open-gpu-doc "$OPEN_GPU_DOC_COMMIT" "$OPEN_GPU_DOC_DIR" \
        "${OPEN_GPU_DOC_GIT:-}" "$OPEN_GPU_DOC_PATHS" classes/compute/clcec0qmd.h; then
    missing="$missing open-gpu-doc"
fi

if [ -n "$missing" ]; then
    say "optional upstream trees not available:$missing"
    say "the tests of the facts they hold record a skip naming them; set OGKM_GIT and OPEN_GPU_DOC_GIT to local clones to check them"
fi
say "done: $DATA"
