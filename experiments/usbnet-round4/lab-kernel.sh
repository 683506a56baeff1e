#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lab-kernel.sh KSRC OUT [FRAGMENT...] - build the VM lab's own x86_64 kernel
# of a tree (6.18.19 here: Debian serves no 6.18 headers) with
# x86_64_defconfig plus lab-kernel.fragment and then each FRAGMENT given (a
# later line for the same option wins: usbnet-rxcost/kasan.fragment makes a
# KASAN kernel named -wslab-kasan), and lay it out for `wirespeed lab vm --kernel
# OUT/bzImage --modules OUT/lib/modules/RELEASE`; OUT/build is the build
# directory kernel/usbnet/build.sh takes as --kdir (it has Module.symvers).
# It says what it boots: OUT/config-RELEASE is the whole .config, and the
# release carries -wslab so it is never taken for a distribution's kernel.
# LAB_ARCH=arm64 cross-builds (aarch64-linux-gnu-gcc, or CROSS_COMPILE) an
# arm64 kernel for --arch arm64 --machine virt instead: arm64's defconfig
# with no SoC platform and the subsystems no lab scenario uses left out
# (lab-kernel-arm64.fragment, after lab-kernel.fragment), the release
# -wslab-arm64, OUT/Image in place of OUT/bzImage.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: lab-kernel.sh KSRC OUT [FRAGMENT...]" >&2; exit 2; }
ksrc="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
shift 2
arch="${LAB_ARCH:-x86_64}"
case "$arch" in
x86_64)
	defconfig=x86_64_defconfig image=bzImage
	frags=("$here/lab-kernel.fragment")
	;;
arm64)
	export ARCH=arm64 CROSS_COMPILE="${CROSS_COMPILE:-aarch64-linux-gnu-}"
	command -v "${CROSS_COMPILE}gcc" >/dev/null ||
		{ echo "lab-kernel: no ${CROSS_COMPILE}gcc for an arm64 kernel: apt-get install gcc-aarch64-linux-gnu" >&2; exit 2; }
	defconfig=defconfig image=Image
	frags=("$here/lab-kernel.fragment" "$here/lab-kernel-arm64.fragment")
	;;
*) echo "lab-kernel: LAB_ARCH=$arch: x86_64 or arm64" >&2; exit 2 ;;
esac
for f in "$@"; do
	[ -r "$f" ] || { echo "lab-kernel: no fragment $f" >&2; exit 2; }
	frags+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
done
b="$out/build"
mkdir -p "$b"
make -C "$ksrc" O="$b" "$defconfig" >/dev/null
(cd "$b" && "$ksrc/scripts/kconfig/merge_config.sh" -m -O "$b" "$b/.config" "${frags[@]}" >/dev/null)
make -C "$ksrc" O="$b" olddefconfig >/dev/null
# every fragment line must have survived olddefconfig (the last one given
# for an option: the fragments in order, each option's last line kept)
cat "${frags[@]}" | grep -v '^#' | grep . |
	awk -F= '{ last[$1] = $0; order[$1] = NR } END { for (k in last) print order[k], last[k] }' |
	sort -n | cut -d' ' -f2- >"$b/ws-fragment"
while IFS= read -r l; do
	k="${l%%=*}" v="${l#*=}"
	if [ "$v" = n ]; then grep -q "^# $k is not set" "$b/.config" && continue; fi
	grep -qx "$l" "$b/.config" || { echo "lab-kernel: $l did not survive olddefconfig" >&2; exit 1; }
done <"$b/ws-fragment"
nice -n 10 make -C "$ksrc" O="$b" -j"$(nproc)" "$image" modules >"$out/build.log" 2>&1 ||
	{ tail -20 "$out/build.log" >&2; exit 1; }
rel="$(cat "$b/include/config/kernel.release")"
rm -rf "${out:?}/lib"
make -C "$ksrc" O="$b" INSTALL_MOD_PATH="$out" INSTALL_MOD_STRIP=1 modules_install >>"$out/build.log" 2>&1
if [ "$arch" = arm64 ]; then
	cp "$b/arch/arm64/boot/Image" "$out/Image"
else
	cp "$b/arch/x86/boot/bzImage" "$out/bzImage"
fi
cp "$b/.config" "$out/config-$rel"
echo "lab-kernel: $rel in $out ($image, lib/modules/$rel); config sha256 $(sha256sum "$out/config-$rel" | cut -c1-16)"
