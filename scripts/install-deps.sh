#!/usr/bin/env bash
# Host tools for building boot images and running QEMU: checks for them and, when something is
# missing, installs it with apt-get (as root) or says exactly what to install (exit 2).
#
#   scripts/install-deps.sh [--check] [GROUP...]
#     GROUP: qemu (qemu-system-x86_64), iso (GRUB BIOS+UEFI, grub-mkrescue, xorriso, mtools),
#            uefi (OVMF), acpi (iasl), cuda (clang-19: compiles payloads/*.cu to PTX for the
#            PTX tests), edid (edid-decode: the reference for the EDID edge-case tests);
#            none given = all of them.
#     QEMU must be 8.1 or newer (x2APIC under TCG, `-machine acpi=off`); on Debian bookworm,
#     whose own QEMU is 7.2, it comes from bookworm-backports (a sources file is added for it).
#     --check  only check; exit 2 if something is missing.
set -euo pipefail

check_only=0
groups=()
for arg in "$@"; do
    case "$arg" in
        --check) check_only=1 ;;
        qemu|iso|uefi|acpi|cuda|edid) groups+=("$arg") ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-deps.sh: unknown argument '$arg' (see --help)" >&2; exit 64 ;;
    esac
done
[ ${#groups[@]} -eq 0 ] && groups=(qemu iso uefi acpi cuda edid)

missing=()   # Debian packages
why=()       # what was missing, for the message
qemu_backports=0

# QEMU's version as a number: 10.0.2 -> 100002, 7.2.22 -> 70222.
qemu_version() {
    qemu-system-x86_64 --version 2>/dev/null | head -n1 \
        | sed -n 's/.*version \([0-9]*\)\.\([0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2 \3/p' \
        | awk '{ printf "%d\n", $1 * 10000 + $2 * 100 + ($3 == "" ? 0 : $3) }'
}

need_cmd() { # command package
    command -v "$1" >/dev/null 2>&1 || { missing+=("$2"); why+=("$1"); }
}
need_path() { # path package
    [ -e "$1" ] || { missing+=("$2"); why+=("$1"); }
}

for group in "${groups[@]}"; do
    case "$group" in
        qemu)
            if ! command -v qemu-system-x86_64 >/dev/null 2>&1 || [ "$(qemu_version)" -lt 80100 ]; then
                missing+=(qemu-system-x86); why+=("qemu-system-x86_64 >= 8.1")
                grep -qs 'VERSION_CODENAME=bookworm' /etc/os-release && qemu_backports=1
            fi ;;
        iso)
            need_cmd grub-mkrescue grub-common
            need_path /usr/lib/grub/i386-pc/modinfo.sh grub-pc-bin
            need_path /usr/lib/grub/x86_64-efi/modinfo.sh grub-efi-amd64-bin
            need_cmd xorriso xorriso
            need_cmd mformat mtools ;;
        uefi)
            if [ ! -e /usr/share/OVMF/OVMF_CODE_4M.fd ] && [ ! -e /usr/share/ovmf/OVMF.fd ]; then
                missing+=(ovmf); why+=(/usr/share/OVMF/OVMF_CODE_4M.fd)
            fi ;;
        acpi)
            need_cmd iasl acpica-tools ;;
        cuda)
            # Debian bookworm main; sm_90 / PTX ISA 7.8 needs LLVM 19 (clang-14 stops at sm_86).
            need_cmd clang-19 clang-19 ;;
        edid)
            # Debian bookworm main; tests/tests/edid_edge.rs compares nvgpu::display with it.
            need_cmd edid-decode edid-decode ;;
    esac
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

# One package may cover several missing things.
packages=()
declare -A listed=()
for package in "${missing[@]}"; do
    [ -n "${listed[$package]:-}" ] && continue
    listed[$package]=1
    packages+=("$package")
done
echo "install-deps.sh: missing: ${why[*]}" >&2

if [ "$check_only" -eq 1 ]; then
    echo "install-deps.sh: install with: apt-get install -y ${packages[*]}" >&2
    [ "$qemu_backports" -eq 1 ] && echo "install-deps.sh: (qemu-system-x86 from bookworm-backports: apt-get install -t bookworm-backports qemu-system-x86)" >&2
    exit 2
fi

if [ "${EUID}" -ne 0 ]; then
    echo "install-deps.sh: not root, so not installing. As root, run:" >&2
    echo "    apt-get update && apt-get install -y --no-install-recommends ${packages[*]}" >&2
    echo "(or: sudo $0 ${*:-})" >&2
    exit 2
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps.sh: no apt-get here; install the equivalents of these Debian packages: ${packages[*]}" >&2
    exit 2
fi

echo "install-deps.sh: apt-get install ${packages[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if [ "$qemu_backports" -eq 1 ]; then
    # bookworm's QEMU 7.2 lacks x2APIC under TCG: take QEMU from bookworm-backports.
    backports=/etc/apt/sources.list.d/gpu-runtime-backports.sources
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        mirror="$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
        [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
        printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror" >"$backports"
        echo "install-deps.sh: added $backports for QEMU" >&2
    fi
    apt-get update
    apt-get install -y --no-install-recommends -t bookworm-backports qemu-system-x86
    others=()
    for p in "${packages[@]}"; do [ "$p" = qemu-system-x86 ] || others+=("$p"); done
    packages=("${others[@]}")
else
    apt-get update
fi
[ ${#packages[@]} -eq 0 ] || apt-get install -y --no-install-recommends "${packages[@]}"

# Check again: a package that installed but did not provide the file is still a failure.
exec "$0" --check "${groups[@]}"
