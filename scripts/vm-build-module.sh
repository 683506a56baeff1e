#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vm-build-module.sh SRC_DIR [OUT_DIR] - build an out-of-tree kernel module
# (SRC_DIR with a Kbuild file) against the Debian kernel headers that
# 'wirespeed lab vm' fetched into its cache, without installing them.
# The .ko files land in OUT_DIR (default SRC_DIR), ready for
#   wirespeed lab vm SCENARIO --modules-dir OUT_DIR [--load NAME]
# Needs gcc-12 and make (the compiler Debian built its 6.12 kernel with).
# Without KERNEL_RELEASE: the newest amd64 kernel in the cache (the x86
# lab's guest; the cache may hold arm64 kernels too).
set -eu
src=$(cd "$1" && pwd)
out=${2:-$src}
cache=${WIRESPEED_CACHE:-/var/cache/wirespeed}
# the newest cached kernel of this host's architecture (the cache also
# holds arm64 guests' kernels, whose headers cannot build here this way)
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
rel=${KERNEL_RELEASE:-$(for d in "$cache"/kernel/*-"$arch"/ready; do [ -f "$d" ] && basename "$(dirname "$d")"; done | sort -t. -k3 -n | tail -n 1)}
root="$cache/kernel/$rel/root"
hdr="$root/usr/src/linux-headers-$rel"
[ -d "$hdr" ] || { echo "no headers for $rel in $cache: run 'wirespeed lab vm boot' once to fetch the kernel" >&2; exit 1; }
common=
for d in "$root"/usr/src/linux-headers-*-common; do [ -d "$d" ] && { common=$d; break; }; done
command -v gcc-12 >/dev/null || { echo "gcc-12 is missing: apt-get install gcc-12 make" >&2; exit 1; }
# The headers' Makefile includes /usr/src/linux-headers-…-common/Makefile by
# absolute path; point a copy at the extracted tree instead.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'include %s/Makefile\n' "$common" > "$work/Makefile"
# Build in a copy so the source directory stays clean.
mkdir "$work/src"
cp -R "$src"/. "$work/src/"
make -C "$hdr" -f "$work/Makefile" M="$work/src" modules >&2
mkdir -p "$out"
for k in "$work"/src/*.ko; do
	cp "$k" "$out/"
	echo "$out/$(basename "$k")"
done
