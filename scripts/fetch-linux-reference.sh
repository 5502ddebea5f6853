#!/usr/bin/env bash
# The reference `cargo xtask bench` times the unikernel against (issue 16): Debian bookworm's
# Linux kernel (the package linux-image-amd64 depends on today) and busybox-static, from
# Debian's archive, unpacked under target/linux-ref/:
#   target/linux-ref/vmlinuz   the kernel (bzImage, booted by QEMU -kernel)
#   target/linux-ref/busybox   the static busybox that becomes the initramfs's /init
#   target/linux-ref/VERSION   the two package versions
# xtask builds the initramfs itself. Cached: a second run downloads nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'fetch-linux-reference: %s\n' "$*"; }
die() { printf 'fetch-linux-reference: error: %s\n' "$*" >&2; exit 1; }

OUT=target/linux-ref
mkdir -p "$OUT"
if [ -f "$OUT/vmlinuz" ] && [ -f "$OUT/busybox" ] && [ -f "$OUT/VERSION" ]; then
    say "already here: $(tr '\n' ' ' < "$OUT/VERSION")"
    exit 0
fi
command -v apt-get >/dev/null || die "apt-get not found (a Debian machine is needed)"
image="$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)"
if [ -z "$image" ]; then
    apt-get update -qq
    image="$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)"
fi
[ -n "$image" ] || die "cannot tell which kernel package linux-image-amd64 depends on"
tmp="$OUT/tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
say "apt-get download $image busybox-static"
(cd "$tmp" && apt-get download "$image" busybox-static 2>&1 | grep -v '^W: ' || true)
kdeb="$(ls "$tmp"/linux-image-*.deb 2>/dev/null | head -n1)"
bdeb="$(ls "$tmp"/busybox-static_*.deb 2>/dev/null | head -n1)"
[ -n "$kdeb" ] && [ -n "$bdeb" ] || die "apt-get download did not fetch $image and busybox-static"
dpkg-deb -x "$kdeb" "$tmp/k"
dpkg-deb -x "$bdeb" "$tmp/b"
cp "$(ls "$tmp"/k/boot/vmlinuz-* | head -n1)" "$OUT/vmlinuz"
cp "$tmp/b/bin/busybox" "$OUT/busybox"
{
    dpkg-deb -f "$kdeb" Package Version | tr '\n' ' '
    echo
    dpkg-deb -f "$bdeb" Package Version | tr '\n' ' '
    echo
} > "$OUT/VERSION"
rm -rf "$tmp"
say "unpacked: $(tr '\n' ' ' < "$OUT/VERSION")"
