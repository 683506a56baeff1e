#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kasan-kernel.sh - the lab's KASAN + kmemleak kernel of Debian's 7.3.4, for
# running usbnet and its minidrivers (stock, and with our series built
# against it by ../build.sh) under hostile devices in `wirespeed lab vm`.
#
#   sudo kernel/usbnet/lab/kasan-kernel.sh        (or: sudo make -C kernel/usbnet kasan-kernel)
#   sudo BASE_PKG=linux-source-6.12 BASE_VER=6.12.117-1~deb12u1 kernel/usbnet/lab/kasan-kernel.sh
#                                  the same of Debian 12's 6.12 (patches/6.12; into
#                                  /var/cache/wirespeed/kasan-6.12.117)
#
# Source: Debian's linux-source-7.3 (BASE_VER, 7.3.4-1~bpo13+1), the .deb
# reused from ../net-next/check.sh's cache ($NN_CACHE/debs) or fetched the
# same way (apt-get download through private apt lists, the host's apt and
# dpkg state untouched). Config: x86_64_defconfig + kvm_guest.config + the
# fragment below (generic inline KASAN, kmemleak on at boot, DEBUG_KERNEL,
# no panic on oops; panic_on_warn is a boot parameter the lab does not set; xhci, usbnet with every minidriver, dummy_hcd and the
# configfs gadget functions as modules; TUN, VETH, WIREGUARD, prio and
# fq_codel; BPF). Graphics, sound and wireless are left out to build
# faster, and so are what a guest on an initramfs with only serial ports
# and USB does not use (disks, NFS, Ethernet cards, PC cards). BTF=1 adds
# DEBUG_INFO_BTF (pahole of the build root) at the cost
# of DWARF in every object: much longer builds, so it is off by default.
#
# Built with gcc-14 in a Debian 13 root ($OUT/root: a copy of check.sh's
# root plus flex, bison, libelf-dev, libssl-dev; debootstrap when there is
# none), entered with unshare -m + chroot, make -j$JOBS (2).
#
# Out ($OUT, /var/cache/wirespeed/kasan-X.Y.Z of BASE_VER: kasan-7.3.4,
# kasan-6.12.117): bzImage, lib/modules/RELEASE,
# config-RELEASE, build/ (the O= tree: ../build.sh --kdir), src/ (the
# source: --ksrc), build.log. CONFIG_ONLY=1 stops after the .config. A rerun with the same source and fragment
# rebuilds nothing (FORCE=1 runs make again, which is incremental).
# Release: X.Y.Z-wskasan (7.3.4-wskasan). Run a scenario on it:
#   wirespeed lab vm usb-gadget --kernel $OUT/bzImage --modules $OUT/lib/modules/7.3.4-wskasan ...
set -euo pipefail

usbnet="$(cd "$(dirname "$0")/.." && pwd)"
base_pkg="${BASE_PKG:-linux-source-7.3}"
base_ver="${BASE_VER:-7.3.4-1~bpo13+1}"
out="${OUT:-/var/cache/wirespeed/kasan-${base_ver%%-*}}"
nn_cache="${NN_CACHE:-/var/cache/wirespeed/net-next}"
# the series' family, as ../build.sh picks it (7.0-7.3 share patches/7.x)
family="${base_pkg#linux-source-}"
case "$family" in 7.*) family=7.x ;; esac

mirror="${MIRROR:-http://deb.debian.org/debian}"
jobs="${JOBS:-2}"
btf="${BTF:-0}"
localversion="-wskasan"

say() { echo "kasan-kernel: $*" >&2; }
die() { say "$*"; exit 1; }

[ -d "$usbnet/patches/$family" ] || die "no patches/$family for $base_pkg (BASE_PKG names linux-source-X.Y)"
[ "$(id -u)" = 0 ] || die "run as root (apt-get download, debootstrap and chroot need it)"
for t in apt-get dpkg-deb xz tar unshare chroot sha256sum; do
	command -v "$t" >/dev/null || die "$t is missing"
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# 1. The source package: check.sh's cached .deb, else apt-get download.
deb=""
for d in "$nn_cache/debs" "$out/debs"; do
	f="$d/${base_pkg}_${base_ver//:/%3a}_all.deb"
	[ -f "$f" ] && { deb="$f"; break; }
done
if [ -z "$deb" ]; then
	apt_dir="$out/apt"
	apt_opts=(-o Dir::State::Lists="$apt_dir/lists" -o Dir::Etc::SourceList="$apt_dir/sources.list"
		-o Dir::Etc::SourceParts=/dev/null -o Dir::Cache="$apt_dir/cache"
		-o Dir::State::status="$apt_dir/status" -o APT::Architecture=amd64
		-o Acquire::Languages=none)
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$out/debs"
	[ -f "$apt_dir/status" ] || : >"$apt_dir/status"
	printf 'deb %s %s main\n' "$mirror" trixie "$mirror" trixie-backports "$mirror" bookworm "$mirror" bookworm-updates >"$apt_dir/sources.list"
	say "fetching $base_pkg $base_ver into $out/debs"
	apt-get "${apt_opts[@]}" -q update >"$apt_dir/update.log" 2>&1 ||
		die "apt-get update failed (log: $apt_dir/update.log)"
	(cd "$out/debs" && apt-get "${apt_opts[@]}" -q download "$base_pkg=$base_ver" >/dev/null 2>&1) ||
		die "apt-get download $base_pkg=$base_ver failed: is it still in Debian's archive? (set BASE_VER to one that is)"
	deb="$out/debs/${base_pkg}_${base_ver//:/%3a}_all.deb"
	[ -f "$deb" ] || die "apt-get download left no $deb"
fi

# 2. The whole tree, unpacked once.
src="$out/src"
if [ ! -f "$src/.complete" ] || [ "$(cat "$src/.complete")" != "$base_pkg $base_ver" ]; then
	say "unpacking $(basename "$deb") into $src"
	rm -rf "$src" && mkdir -p "$src"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$base_pkg.tar.xz" | xz -dc |
		tar -x -C "$src" --strip-components=1
	echo "$base_pkg $base_ver" >"$src/.complete"
fi

# 3. The build root: Debian 13 (gcc-14) with the kernel's build tools.
root="$out/root"
extra="flex bison libelf-dev libssl-dev cpio bc kmod dwarves make gcc-14 libc6-dev patch"
if [ ! -f "$root/.complete" ]; then
	rm -rf "$root"
	if [ -f "$nn_cache/root/.complete" ]; then
		say "copying check.sh's Debian 13 root ($nn_cache/root) to $root"
		cp -a "$nn_cache/root" "$root"
		rm -f "$root/.complete"
	else
		command -v debootstrap >/dev/null ||
			apt-get install -y -q --no-install-recommends debootstrap >/dev/null
		say "making a Debian 13 build root in $root (once; a few minutes)"
		nice -n 10 debootstrap --variant=minbase --include="${extra// /,}" \
			trixie "$root" "$mirror" >"$out/debootstrap.log" 2>&1 ||
			die "debootstrap failed (log: $out/debootstrap.log)"
	fi
	[ -s "$root/etc/resolv.conf" ] || cp /etc/resolv.conf "$root/etc/resolv.conf"
	say "installing the kernel's build tools in the root: $extra"
	# shellcheck disable=SC2016 # the inner bash expands these
	unshare -m bash -c 'r="$0"
		for d in /proc /dev; do mount --bind "$d" "$r$d"; done
		exec chroot "$r" env PATH=/usr/bin:/bin:/usr/sbin:/sbin DEBIAN_FRONTEND=noninteractive "$@"' \
		"$root" sh -c "apt-get -q update && apt-get install -y -q --no-install-recommends $extra && apt-get clean" \
		>"$out/root-apt.log" 2>&1 || die "apt-get install in the root failed (log: $out/root-apt.log)"
	touch "$root/.complete"
fi
in_root() { # CMD... in the build root, with $out and kernel/usbnet at the same paths
	# shellcheck disable=SC2016 # the inner bash expands these
	unshare -m bash -c '
		r="$0" c="$1" u="$2"; shift 2
		for d in /proc /dev "$c" "$u"; do mkdir -p "$r$d"; mount --bind "$d" "$r$d"; done
		exec chroot "$r" env PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/tmp LC_ALL=C.UTF-8 "$@"' \
		"$root" "$out" "$usbnet" "$@"
}
kmake() { in_root nice -n 10 make -C "$src" O="$out/build" CC=gcc-14 HOSTCC=gcc-14 "$@"; }

# 4. The config fragment (the last line for an option wins over
# x86_64_defconfig and kvm_guest.config).
frag="$out/kasan.fragment"
{
	cat <<EOF
# made by kernel/usbnet/lab/kasan-kernel.sh
CONFIG_LOCALVERSION="$localversion"
CONFIG_LOCALVERSION_AUTO=n
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_DEVTMPFS=y
CONFIG_DEBUG_KERNEL=y
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_KASAN_INLINE=y
CONFIG_SLUB_DEBUG=y
CONFIG_DEBUG_KMEMLEAK=y
CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF=n
CONFIG_PANIC_ON_OOPS=n
CONFIG_CONFIGFS_FS=m
CONFIG_PM=y
CONFIG_USB=y
CONFIG_USB_XHCI_HCD=m
CONFIG_USB_XHCI_PCI=m
CONFIG_USB_GADGET=m
CONFIG_USB_DUMMY_HCD=m
CONFIG_USB_LIBCOMPOSITE=m
CONFIG_USB_CONFIGFS=m
CONFIG_USB_CONFIGFS_NCM=y
CONFIG_USB_CONFIGFS_ECM=y
CONFIG_USB_CONFIGFS_ECM_SUBSET=y
CONFIG_USB_CONFIGFS_EEM=y
CONFIG_USB_CONFIGFS_RNDIS=y
CONFIG_USB_NET_DRIVERS=m
EOF
	# usbnet and everything else in drivers/net/usb (not phonet's
	# cdc-phonet, nor the hidden CDC_SUBSET_ENABLE)
	for c in USB_CATC USB_KAWETH USB_PEGASUS USB_RTL8150 USB_RTL8152 USB_LAN78XX USB_USBNET \
		USB_NET_AX8817X USB_NET_AX88179_178A USB_NET_CDCETHER USB_NET_CDC_EEM USB_NET_CDC_NCM \
		USB_NET_HUAWEI_CDC_NCM USB_NET_CDC_MBIM USB_NET_DM9601 USB_NET_SR9700 USB_NET_SR9800 \
		USB_NET_SMSC75XX USB_NET_SMSC95XX USB_NET_GL620A USB_NET_NET1080 USB_NET_PLUSB \
		USB_NET_MCS7830 USB_NET_RNDIS_HOST USB_NET_CDC_SUBSET USB_NET_ZAURUS USB_NET_CX82310_ETH \
		USB_NET_KALMIA USB_NET_QMI_WWAN USB_HSO USB_NET_INT51X1 USB_IPHETH USB_SIERRA_NET \
		USB_VL600 USB_NET_CH9200 USB_NET_AQC111 USB_RTL8153_ECM; do
		echo "CONFIG_$c=m"
	done
	for c in USB_ALI_M5632 USB_AN2720 USB_BELKIN USB_ARMLINUX USB_EPSON2888 USB_KC2190; do
		echo "CONFIG_$c=y"
	done
	cat <<EOF
CONFIG_TUN=m
CONFIG_VETH=m
CONFIG_WIREGUARD=m
CONFIG_NET_SCHED=y
CONFIG_NET_SCH_PRIO=m
CONFIG_NET_SCH_FQ_CODEL=m
CONFIG_NET_SCH_FQ=m
CONFIG_BQL=y
CONFIG_RPS=y
CONFIG_BPF_SYSCALL=y
CONFIG_BPF_JIT=y
CONFIG_BPF_EVENTS=y
CONFIG_KPROBES=y
CONFIG_FTRACE=y
CONFIG_TRACEPOINTS=y
CONFIG_IKCONFIG=y
CONFIG_IKCONFIG_PROC=y
CONFIG_DRM=n
CONFIG_SOUND=n
CONFIG_WIRELESS=n
CONFIG_WLAN=n
CONFIG_NFS_FS=n
CONFIG_ATA=n
CONFIG_SCSI=n
CONFIG_USB_STORAGE=n
CONFIG_MD=n
CONFIG_PCCARD=n
CONFIG_ETHERNET=n
CONFIG_AGP=n
CONFIG_INPUT_JOYSTICK=n
CONFIG_INPUT_TABLET=n
CONFIG_INPUT_TOUCHSCREEN=n
EOF
	if [ "$btf" = 1 ]; then
		printf 'CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y\nCONFIG_DEBUG_INFO_BTF=y\nCONFIG_DEBUG_INFO_BTF_MODULES=y\n'
	else
		echo "CONFIG_DEBUG_INFO_NONE=y"
	fi
} >"$frag.new"
mv "$frag.new" "$frag"

# 5. Configure and build, unless this source and fragment were built.
b="$out/build"
build_kernel() {
	rm -f "$out/.complete"
	mkdir -p "$b"
	if [ ! -f "$b/ws-fragment" ] || ! cmp -s "$frag" "$b/ws-fragment" || [ ! -f "$b/.config" ]; then
		say "configuring in $b: x86_64_defconfig + kvm_guest.config + $frag"
		kmake x86_64_defconfig >/dev/null
		kmake kvm_guest.config >/dev/null
		in_root sh -c "cd '$b' && '$src/scripts/kconfig/merge_config.sh' -m -O '$b' '$b/.config' '$frag'" >/dev/null
		kmake olddefconfig >/dev/null
		# every fragment line must have survived (=m also as =y)
		while IFS= read -r l; do
			case "$l" in '#'* | '') continue ;; esac
			k="${l%%=*}" v="${l#*=}"
			case "$v" in
			n) grep -q "^# $k is not set" "$b/.config" || ! grep -q "^$k=" "$b/.config" ;;
			m) grep -qE "^$k=(m|y)$" "$b/.config" ;;
			*) grep -qxF "$l" "$b/.config" ;;
			esac || die "$l did not survive olddefconfig (see $b/.config)"
		done <"$frag"
		cp "$frag" "$b/ws-fragment"
	fi
	[ -z "${CONFIG_ONLY:-}" ] || { say "configured: $b/.config (CONFIG_ONLY set: not built)"; exit 0; }
	say "building $rel: make -j$jobs bzImage modules (log: $out/build.log)"
	start=$(date +%s)
	kmake -j"$jobs" bzImage modules >"$out/build.log" 2>&1 ||
		{ tail -30 "$out/build.log" >&2; die "build failed (log: $out/build.log)"; }
	got="$(cat "$b/include/config/kernel.release")"
	[ "$got" = "$rel" ] || die "built $got, expected $rel"
	rm -rf "${out:?}/lib"
	kmake INSTALL_MOD_PATH="$out" INSTALL_MOD_STRIP=1 modules_install >>"$out/build.log" 2>&1 ||
		die "modules_install failed (log: $out/build.log)"
	# the lab reads modules from this tree, not through its build/source links
	rm -f "$out/lib/modules/$rel/build" "$out/lib/modules/$rel/source"
	cp "$b/arch/x86/boot/bzImage" "$out/bzImage"
	cp "$b/.config" "$out/config-$rel"
	echo "$stamp" >"$out/.complete"
	say "$rel in $out (bzImage, lib/modules/$rel, config-$rel) in $(( ($(date +%s) - start) / 60 )) min"
}
stamp="$base_pkg $base_ver $(sha256sum <"$frag" | cut -c1-16)"
rel="${base_ver%%-*}$localversion"
if [ -z "${FORCE:-}" ] && [ -f "$out/.complete" ] && [ "$(cat "$out/.complete")" = "$stamp" ] &&
	[ -f "$out/bzImage" ] && [ -d "$out/lib/modules/$rel" ]; then
	say "built already: $rel in $out (FORCE=1 runs make again)"
else
	build_kernel
fi

# 6. usbnet and its 28 minidrivers built by ../build.sh against this
# kernel: with our series into $out/ours, stock sources into $out/stock,
# each with the lab's rate-capped dummy_hcd (--lab-bus). Rebuilt when the
# kernel, the series or the lab patches change.
mstamp="$(cat "$out/.complete") $(cat "$usbnet/patches/$family"/*.patch "$usbnet/lab/$family"/*.patch "$usbnet/build.sh" | sha256sum | cut -c1-16)"
for side in ours stock; do
	o="$out/$side"
	if [ -z "${FORCE:-}" ] && [ -f "$o/.ws-stamp" ] && [ "$(cat "$o/.ws-stamp")" = "$mstamp" ]; then
		say "$side modules built already in $o"
		continue
	fi
	args=(--kver "$rel" --kdir "$out/build" --ksrc "$src" --out "$o" --lab-bus)
	[ "$side" = ours ] || args+=(--no-series)
	rm -rf "$o"
	in_root nice -n 10 bash "$usbnet/build.sh" "${args[@]}" || die "build.sh ${args[*]} failed"
	rm -rf "$o/tree"
	if [ "$side" = ours ]; then echo "+ patches/$family (kasan-kernel.sh)"; else echo "stock: --no-series (kasan-kernel.sh)"; fi >>"$o/SOURCE"
	echo "$mstamp" >"$o/.ws-stamp"
done
say "done: wirespeed lab vm SCENARIO --kernel $out/bzImage --modules $out/lib/modules/$rel [--modules-dir $out/ours]"
