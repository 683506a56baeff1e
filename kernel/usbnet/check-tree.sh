#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# check-tree.sh - check a family's series against a whole kernel tree of
# that family, for kernels whose headers no distribution archive serves
# (6.18: Debian carries neither its headers nor its source any more):
#   1. the series applies with git am to the tree's drivers/net/usb and
#      usbnet headers;
#   2. at every patch usbnet, cdc_ncm, cdc_mbim, ax88179_178a, aqc111 and
#      cdc_ether build without warnings for x86_64 and arm64, against the tree made
#      ready for module builds (defconfig + usbnet, make modules_prepare,
#      once per tree in the cache);
#   3. checkpatch.pl --strict of the tree: 0 errors, 0 warnings, 0 checks;
#   4. all 28 modules on usbnet build at the last patch.
#
#   kernel/usbnet/check-tree.sh KSRC SERIES
#   kernel/usbnet/check-tree.sh ~/linux-6.18.19 kernel/usbnet/patches/6.18
#
# KSRC is an unpacked kernel.org release (or any tree of the family; the
# tarball is https://cdn.kernel.org/pub/linux/kernel/v6.x/linux-6.18.19.tar.xz).
# A tree prepared with modules_prepare has no Module.symvers, so modpost's
# notes on unresolved symbols are allowed (KBUILD_MODPOST_WARN=1); any
# compiler warning or error fails the check. Needs gcc, flex, bison, bc, libelf-dev, libssl-dev and
# gcc-aarch64-linux-gnu (ARCHS="x86_64" skips arm64).
set -euo pipefail

die() { echo "check-tree: $*" >&2; exit 1; }
[ $# = 2 ] || die "usage: check-tree.sh KSRC SERIES (see the comment at the top)"
ksrc="$(cd "$1" 2>/dev/null && pwd)" || die "$1: no such directory"
series="$(cd "$2" 2>/dev/null && pwd)" || die "$2: no such directory"
{ [ -f "$ksrc/drivers/net/usb/usbnet.c" ] && [ -f "$ksrc/scripts/checkpatch.pl" ]; } ||
	die "$ksrc is not a whole kernel tree (drivers/net/usb/usbnet.c, scripts/checkpatch.pl)"
ls "$series"/0001-*.patch >/dev/null 2>&1 || die "no patches in $series"
archs="${ARCHS:-x86_64 arm64}"
for t in git make gcc flex bison bc perl; do
	command -v "$t" >/dev/null || die "$t is missing (apt-get install $t)"
done
case " $archs " in *" arm64 "*) command -v aarch64-linux-gnu-gcc >/dev/null ||
	die "aarch64-linux-gnu-gcc is missing (apt-get install gcc-aarch64-linux-gnu, or ARCHS=x86_64)" ;; esac
if [ "$(id -u)" = 0 ]; then cache=/var/cache/wirespeed; else cache="${XDG_CACHE_HOME:-$HOME/.cache}/wirespeed"; fi
ver="$(make -s --no-print-directory -C "$ksrc" kernelversion 2>/dev/null)" || die "$ksrc: make kernelversion failed"
work="${WORK:-$cache/check-tree/$ver}"
mkdir -p "$work"

# 1. The tree's usbnet files in a git repository, the series applied.
repo="$work/repo"
rm -rf "$repo" && mkdir -p "$repo/drivers/net/usb" "$repo/include/linux/usb"
cp "$ksrc"/drivers/net/usb/*.[ch] "$repo/drivers/net/usb/"
cp "$ksrc"/include/linux/usb/usbnet.h "$ksrc"/include/linux/usb/cdc_ncm.h "$repo/include/linux/usb/"
g=(git -C "$repo" -c user.name=check -c user.email=check@invalid -c commit.gpgsign=false)
"${g[@]}" init -q && "${g[@]}" add -A && "${g[@]}" commit -q -m "Linux $ver"
patches=()
for p in "$series"/[0-9][0-9][0-9][0-9]-*.patch; do
	case "$(basename "$p")" in 0000-*) ;; *) patches+=("$p") ;; esac
done
"${g[@]}" am -q "${patches[@]}" || die "git am: the series does not apply to Linux $ver"
echo "check-tree: ${#patches[@]} patches of $series apply to Linux $ver ($ksrc)"

# 2. The tree made ready for module builds, once per architecture.
prepared=()
for a in $archs; do
	o="$work/build-$a"
	args=(ARCH="$a")
	[ "$a" = arm64 ] && args+=(CROSS_COMPILE=aarch64-linux-gnu-)
	if [ ! -f "$o/.prepared" ]; then
		echo "check-tree: make modules_prepare for $a in $o (once; a few minutes)"
		rm -rf "$o" && mkdir -p "$o"
		{ make -C "$ksrc" O="$o" "${args[@]}" defconfig >"$o.log" 2>&1 &&
			"$ksrc/scripts/config" --file "$o/.config" -e USB_NET_DRIVERS -e USB_USBNET -e MII &&
			make -C "$ksrc" O="$o" "${args[@]}" olddefconfig >>"$o.log" 2>&1 &&
			make -C "$ksrc" O="$o" "${args[@]}" -j"$(nproc)" modules_prepare >>"$o.log" 2>&1; } ||
			die "modules_prepare for $a failed (log: $o.log)"
		touch "$o/.prepared"
	fi
	prepared+=("$a:$o")
done

# build DIR MODULES...: the modules of DIR's drivers/net/usb for every
# prepared architecture; prints "ARCH:ok" or "ARCH:FAILED(log)".
build() {
	local d="$1" a o b args res=""
	shift
	for ao in "${prepared[@]}"; do
		a="${ao%%:*}" o="${ao#*:}" b="$d-$a"
		rm -rf "$b" && cp -a "$d" "$b"
		{
			echo "NOSTDINC_FLAGS += -I\$(src)/../../../include"
			echo "obj-m := $(printf '%s.o ' "$@")"
			echo "asix-y := asix_devices.o asix_common.o ax88172a.o"
		} >"$b/drivers/net/usb/Kbuild"
		args=(ARCH="$a")
		[ "$a" = arm64 ] && args+=(CROSS_COMPILE=aarch64-linux-gnu-)
		if make -C "$o" M="$b/drivers/net/usb" "${args[@]}" KBUILD_MODPOST_WARN=1 -j"$(nproc)" modules >"$b.log" 2>&1 &&
			! grep -qE ': (warning|error): |\*\*\* ' "$b.log"; then
			res+=" $a:ok"
		else
			res+=" $a:FAILED($b.log)"
		fi
	done
	echo "$res"
}

# 3. Every prefix: build and checkpatch.
fail=0 i=0
for c in $("${g[@]}" rev-list --reverse "HEAD~${#patches[@]}..HEAD"); do
	p="${patches[$i]}"
	i=$((i + 1))
	d="$work/at-$i"
	rm -rf "$d" && mkdir -p "$d"
	"${g[@]}" archive "$c" | tar -x -C "$d"
	res="$(build "$d" usbnet cdc_ncm cdc_mbim ax88179_178a aqc111 cdc_ether)"
	case "$res" in *FAILED*) fail=1 ;; esac
	cp="$(perl "$ksrc/scripts/checkpatch.pl" --strict --no-tree "$p" 2>&1 | sed -n 's/^total: //p' || true)"
	case "$cp" in "0 errors, 0 warnings, 0 checks"*) ;; *) fail=1 ;; esac
	echo "$i/${#patches[@]} $("${g[@]}" log -1 --format=%s "$c"): build$res; checkpatch --strict: $cp"
done
if [ -f "$series/0000-cover-letter.patch" ]; then
	cp="$(perl "$ksrc/scripts/checkpatch.pl" --strict --no-tree "$series/0000-cover-letter.patch" 2>&1 | sed -n 's/^total: //p' || true)"
	case "$cp" in "0 errors, 0 warnings, 0 checks"*) ;; *) fail=1 ;; esac
	echo "cover letter: checkpatch --strict: $cp"
fi

# 4. All 28 modules on usbnet at the last patch (build.sh's list).
res="$(build "$work/at-$i" usbnet asix ax88179_178a cdc_ether cdc_eem cdc_ncm huawei_cdc_ncm cdc_mbim dm9601 sr9700 sr9800 smsc75xx smsc95xx gl620a net1080 plusb rndis_host cdc_subset zaurus mcs7830 int51x1 cx82310_eth kalmia qmi_wwan sierra_net lg-vl600 ch9200 aqc111)"
case "$res" in *FAILED*) fail=1 ;; esac
echo "all 28 modules at the last patch:$res"
if [ "$fail" = 0 ]; then
	echo "check-tree: OK: ${#patches[@]} patches apply to Linux $ver, build at every patch ($archs), checkpatch --strict clean"
else
	echo "check-tree: FAILED (logs in $work)"
	exit 1
fi
