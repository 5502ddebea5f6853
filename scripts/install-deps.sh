#!/usr/bin/env bash
# Host tools for building boot images and running QEMU: checks for them and, when something is
# missing, installs it with apt-get (as root) or says exactly what to install (exit 2).
#
#   scripts/install-deps.sh [--check] [GROUP...]
#     GROUP: qemu (qemu-system-x86_64), iso (GRUB BIOS+UEFI, grub-mkrescue, xorriso, mtools),
#            uefi (OVMF), acpi (iasl); none given = all of them.
#     --check  only check; exit 2 if something is missing.
set -euo pipefail

check_only=0
groups=()
for arg in "$@"; do
    case "$arg" in
        --check) check_only=1 ;;
        qemu|iso|uefi|acpi) groups+=("$arg") ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-deps.sh: unknown argument '$arg' (see --help)" >&2; exit 64 ;;
    esac
done
[ ${#groups[@]} -eq 0 ] && groups=(qemu iso uefi acpi)

missing=()   # Debian packages
why=()       # what was missing, for the message

need_cmd() { # command package
    command -v "$1" >/dev/null 2>&1 || { missing+=("$2"); why+=("$1"); }
}
need_path() { # path package
    [ -e "$1" ] || { missing+=("$2"); why+=("$1"); }
}

for group in "${groups[@]}"; do
    case "$group" in
        qemu)
            need_cmd qemu-system-x86_64 qemu-system-x86 ;;
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
apt-get update
apt-get install -y --no-install-recommends "${packages[@]}"

# Check again: a package that installed but did not provide the file is still a failure.
exec "$0" --check "${groups[@]}"
