#!/bin/bash
# Build wirespeed's usbnet (RX through NAPI + GRO, threaded by default,
# BQL) and every usbnet minidriver from Debian's linux-source-6.12, for one
# Debian 12 6.12 kernel. The patches in patches/ are applied at build time
# to the source fetched by package; nothing else of the kernel is kept here.
#
#   build.sh --kver 6.12.117+deb12-amd64 [--kdir DIR] [--debver VER]
#            [--out DIR] [--cache DIR] [--source-only] [--check-kver]
#            [--no-series] [--extra-patch FILE]... [--lab-bus]
#
# --kdir  the kernel's build directory (DKMS passes /lib/modules/KVER/build;
#         without it, /lib/modules/KVER/build when the headers are installed).
#         Otherwise the matching linux-headers packages are fetched with
#         apt-get download and unpacked in the cache (nothing is installed).
# --debver the Debian version of the kernel packages (6.12.117-1~deb12u1);
#         found with dpkg-query or apt-cache when not given.
# --source-only  fetch and unpack the source, print its directory, stop.
# --check-kver   only say whether KVER is a kernel these patches are for.
# --no-series    build the stock sources (lab comparisons only).
# --extra-patch  also apply FILE after the series (lab/*.patch; lab only).
# --lab-bus      also build dummy_hcd with lab/dummy_hcd-rate-cap.patch
#                (rate_mbit=N: the VM lab's fixed-rate USB bus; lab only).
# The source comes from an installed linux-source-6.12 of the same Debian
# version (/usr/src/linux-source-6.12.tar.xz) when there is one: with the
# headers installed too, nothing is fetched.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
kver="" kdir="" debver="" out="" source_only="" check_only="" series=1
extra=() lab_bus=""
if [ "$(id -u)" = 0 ]; then base=/var/cache/wirespeed; else base="${XDG_CACHE_HOME:-$HOME/.cache}/wirespeed"; fi
cache="${WIRESPEED_CACHE:-$base}/usbnet"

die() { echo "wirespeed-usbnet: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver="$2"; shift 2 ;;
	--kdir) kdir="$2"; shift 2 ;;
	--debver) debver="$2"; shift 2 ;;
	--out) out="$2"; shift 2 ;;
	--cache) cache="$2"; shift 2 ;;
	--source-only) source_only=1; shift ;;
	--check-kver) check_only=1; shift ;;
	--no-series) series=""; shift ;;
	--lab-bus) lab_bus=1; shift ;;
	--extra-patch) extra+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
	-h|--help) sed -n '2,25p' "$0"; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done

[ -n "$kver" ] || die "--kver is required (for example 6.12.117+deb12-amd64)"

# The patches are made for Debian 12's 6.12 kernels; refuse anything else
# before fetching or building a thing. The rule is dkms.conf's
# BUILD_EXCLUSIVE_KERNEL, so that DKMS and this script agree.
rule="$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$here/dkms.conf")"
[ -n "$rule" ] || die "no BUILD_EXCLUSIVE_KERNEL in $here/dkms.conf"
if ! [[ "$kver" =~ $rule ]]; then
	die "kernel $kver is not one these patches are for. They are made for Debian 12's linux-source-6.12 and build for its kernels, 6.12.N+deb12-FLAVOUR (bookworm) and 6.12.N+bpo-FLAVOUR (bookworm-backports), FLAVOUR amd64, arm64, cloud-amd64, cloud-arm64, rt-amd64 or rt-arm64 (rule: $rule). Keep the stock usbnet on this kernel."
fi
[ -z "$check_only" ] || { echo "wirespeed-usbnet: kernel $kver accepted"; exit 0; }
[[ "$kver" =~ ^(6\.12\.[0-9]+)\+(deb12|bpo)- ]]
upver="${BASH_REMATCH[1]}"
# the ABI name in Debian's package names: 6.12.117+deb12, 6.12.9+bpo
abi="$upver+${BASH_REMATCH[2]}"
# and in their Debian versions: 6.12.117-1~deb12u1, 6.12.9-1~bpo12+1
case "${BASH_REMATCH[2]}" in deb12) tag="~deb12" ;; *) tag="~bpo12" ;; esac

for tool in dpkg-deb tar xz patch make; do
	command -v "$tool" >/dev/null || die "$tool is missing (apt-get install dpkg tar xz-utils patch make)"
done

if [ -z "$debver" ]; then
	debver="$(dpkg-query -W -f='${Version}' "linux-headers-$kver" 2>/dev/null || true)"
fi
if [ -z "$debver" ]; then
	debver="$(apt-cache madison linux-source-6.12 2>/dev/null | awk -v v="$upver-" -v t="$tag" 'index($3, v) == 1 && index($3, t) {print $3; exit}')"
fi
[ -n "$debver" ] || die "no Debian package version for $kver: apt-cache knows no linux-source-6.12 $upver-*$tag* (run apt-get update, or give --debver)"
[[ "$debver" == "$upver-"*"$tag"* ]] || die "--debver $debver does not belong to kernel $kver ($upver-*$tag*)"

mkdir -p "$cache"
fetch() { # package=version -> the .deb in the cache
	local pkg="${1%%=*}" ver="${1#*=}" deb
	deb="$(ls "$cache/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | head -1 || true)"
	if [ -z "$deb" ]; then
		command -v apt-get >/dev/null || die "$pkg $ver is neither installed nor in $cache, and there is no apt-get to fetch it"
		echo "wirespeed-usbnet: fetching $pkg $ver" >&2
		(cd "$cache" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) ||
			die "apt-get download $pkg=$ver failed (is the Debian archive reachable, and apt-get update done?)"
		deb="$(ls "$cache/${pkg}_${ver//:/%3a}_"*.deb | head -1)"
	fi
	echo "$deb"
}

# 1. The source: only what the build needs.
src="$cache/src-$debver"
if [ ! -f "$src/.complete" ] || [ ! -f "$src/drivers/usb/gadget/udc/dummy_hcd.c" ]; then
	rm -rf "$src" && mkdir -p "$src"
	installed="$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' linux-source-6.12 2>/dev/null || true)"
	if [ "$installed" = "ii $debver" ] && [ -f /usr/src/linux-source-6.12.tar.xz ]; then
		echo "wirespeed-usbnet: extracting drivers/net/usb from the installed linux-source-6.12 $debver" >&2
		tarball() { cat /usr/src/linux-source-6.12.tar.xz; }
	else
		deb="$(fetch "linux-source-6.12=$debver")"
		echo "wirespeed-usbnet: extracting drivers/net/usb from $(basename "$deb")" >&2
		tarball() { dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-6.12.tar.xz; }
	fi
	tarball | tar -xJ -C "$src" --strip-components=1 \
			linux-source-6.12/drivers/net/usb \
			linux-source-6.12/drivers/usb/gadget/udc/dummy_hcd.c \
			linux-source-6.12/include/linux/usb/usbnet.h \
			linux-source-6.12/include/linux/usb/cdc_ncm.h \
			linux-source-6.12/scripts/checkpatch.pl \
			linux-source-6.12/scripts/spelling.txt \
			linux-source-6.12/scripts/const_structs.checkpatch
	touch "$src/.complete"
fi
if [ -n "$source_only" ]; then
	echo "$src"
	exit 0
fi

# 2. The kernel's build directory: given, installed, or fetched.
if [ -z "$kdir" ] && [ -f "/lib/modules/$kver/build/Makefile" ]; then
	kdir="/lib/modules/$kver/build"
fi
if [ -z "$kdir" ]; then
	hdr="$cache/headers-$kver"
	if [ ! -f "$hdr/.complete" ]; then
		rm -rf "$hdr" && mkdir -p "$hdr"
		for p in "linux-headers-$kver" "linux-headers-$abi-common" "linux-kbuild-$abi"; do
			dpkg-deb -x "$(fetch "$p=$debver")" "$hdr"
		done
		# The arch package includes the common one by absolute path.
		sed -i "s#^include /usr/src/#include $hdr/usr/src/#" "$hdr/usr/src/linux-headers-$kver/Makefile"
		touch "$hdr/.complete"
	fi
	kdir="$hdr/usr/src/linux-headers-$kver"
fi
[ -f "$kdir/Makefile" ] || die "no kernel build directory at $kdir (install linux-headers-$kver)"

# 3. Patch a private copy laid out as in the kernel tree.
out="${out:-$here/out/$kver}"
tree="$out/tree"
rm -rf "$tree" && mkdir -p "$tree/drivers/net/usb" "$tree/include/linux/usb"
cp "$src"/drivers/net/usb/*.[ch] "$tree/drivers/net/usb/"
cp "$src"/include/linux/usb/usbnet.h "$src"/include/linux/usb/cdc_ncm.h "$tree/include/linux/usb/"
series_patches=()
[ -z "$series" ] || series_patches=("$here"/patches/*.patch)
for p in "${series_patches[@]}" "${extra[@]}"; do
	patch -d "$tree" -p1 -s --batch --forward --no-backup-if-mismatch <"$p" ||
		die "$(basename "$p") does not apply to linux-source-6.12 $debver; this release supports the 6.12 sources its patches apply to"
done

modules="usbnet asix ax88179_178a cdc_ether cdc_eem cdc_ncm huawei_cdc_ncm cdc_mbim dm9601 sr9700 sr9800 smsc75xx smsc95xx gl620a net1080 plusb rndis_host cdc_subset zaurus mcs7830 int51x1 cx82310_eth kalmia qmi_wwan sierra_net lg-vl600 ch9200 aqc111"
work="$tree/drivers/net/usb"
{
	echo "# generated by build.sh: the patched usbnet.h must win over the kernel's"
	echo "NOSTDINC_FLAGS += -I\$(src)/../../../include"
	echo "obj-m := $(printf '%s.o ' $modules)"
	echo "asix-y := asix_devices.o asix_common.o ax88172a.o"
} >"$work/Kbuild"

echo "wirespeed-usbnet: building $(echo $modules | wc -w) modules for $kver" >&2
make -C "$kdir" M="$work" -j"$(nproc)" modules >"$out/build.log" 2>&1 ||
	{ tail -20 "$out/build.log" >&2; die "build failed (full log: $out/build.log)"; }
for m in $modules; do
	cp "$work/$m.ko" "$out/"
done
if [ -n "$lab_bus" ]; then
	udc="$tree/drivers/usb/gadget/udc"
	mkdir -p "$udc"
	cp "$src/drivers/usb/gadget/udc/dummy_hcd.c" "$udc/"
	patch -d "$tree" -p1 -s --batch --forward --no-backup-if-mismatch <"$here/lab/dummy_hcd-rate-cap.patch" ||
		die "lab/dummy_hcd-rate-cap.patch does not apply to linux-source-6.12 $debver"
	echo "obj-m := dummy_hcd.o" >"$udc/Kbuild"
	make -C "$kdir" M="$udc" modules >>"$out/build.log" 2>&1 ||
		{ tail -20 "$out/build.log" >&2; die "dummy_hcd build failed (full log: $out/build.log)"; }
	cp "$udc/dummy_hcd.ko" "$out/"
	echo "wirespeed-usbnet: lab dummy_hcd (rate_mbit) in $out" >&2
fi
echo "$debver" > "$out/DEBIAN_VERSION"
echo "wirespeed-usbnet: modules for $kver (linux-source-6.12 $debver) in $out" >&2
