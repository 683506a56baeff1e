#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Check the net-next series the way netdev's CI would at the least: it
# applies with git am to a clean base tree, and at every patch usbnet.ko
# and the minidrivers the series changes (cdc_ncm, cdc_mbim, ax88179_178a)
# build without warnings (x86_64, and arm64 when its headers can be had)
# and scripts/checkpatch.pl --strict of the base tree reports 0 errors,
# 0 warnings, 0 checks.
#
#   sudo kernel/usbnet/net-next/check.sh              # this directory's series
#   sudo SERIES=kernel/usbnet/patches/7.x kernel/usbnet/net-next/check.sh
#   ARCHS=amd64 ...                                   # skip arm64
#   MODULES_OUT=DIR ...     then all 28 modules on usbnet at the last patch,
#                           into DIR/7.3.4+deb13-ARCH/ (as build.sh's out/)
#   PREFIX_OUT=DIR ...      and each prefix's modules (usbnet, cdc_ether,
#                           cdc_ncm, cdc_mbim, ax88179_178a) into
#                           DIR/7.3.4+deb13-ARCH/at-N/, with the lab's
#                           dummy_hcd.ko when LAB_BUS is set, for a run of
#                           every prefix in the lab (experiments/usbnet-round5/prefix-runs.sh)
#   LAB_BUS=1 MODULES_OUT=DIR ...  also the lab's rate-capped dummy_hcd.ko
#                           (../lab/7.x/dummy_hcd-rate-cap.patch, as build.sh
#                           --lab-bus) into DIR/7.3.4+deb13-ARCH/ and, alone,
#                           into DIR/stock-lab-7.3.4+deb13-ARCH/ (the stock
#                           side: the guest's own usbnet with that bus)
#
# The base is Debian's linux-source-7.3 (BASE_VER, 7.3.4 stable), the
# newest tree Debian carries; the modules are built against Debian's
# linux-headers-7.3.4+deb13-{amd64,arm64} (HDR_VER). Everything is
# fetched with apt-get download through private apt lists (trixie,
# trixie-backports; the host's apt and dpkg state are not touched) into
# $CACHE (/var/cache/wirespeed/net-next), so it runs as root on a fresh
# Debian machine. Those headers were built with gcc-14; where the host
# has no gcc-14 (Debian 12), the build runs in a minimal Debian 13 root
# made once with debootstrap in $CACHE/root (about 690 MB, du -sh on
# 2026-11-28), entered with unshare -m + chroot. About 170 MB of packages besides that root.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
series="$(cd "${SERIES:-$here}" && pwd)"
cache="${CACHE:-/var/cache/wirespeed/net-next}"
base_pkg="${BASE_PKG:-linux-source-7.3}"
base_ver="${BASE_VER:-7.3.4-1~bpo13+1}"
hdr_abi="${HDR_ABI:-7.3.4+deb13}"
hdr_ver="${HDR_VER:-7.3.4-1~bpo13+1}"
archs="${ARCHS:-amd64 arm64}"
mirror="${MIRROR:-http://deb.debian.org/debian}"
jobs="${JOBS:-2}"

say() { echo "check.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (apt-get download, debootstrap and chroot need it)"
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || die "an amd64 Debian host is needed (arm64 is cross-built from it)"
for t in apt-get dpkg-deb git perl xz tar unshare chroot; do
	command -v "$t" >/dev/null || die "$t is missing"
done
ls "$series"/0001-*.patch >/dev/null 2>&1 || die "no patches in $series"

# 1. Private apt lists, amd64 and arm64 (arm64 only for its headers).
apt_dir="$cache/apt"
# shellcheck disable=SC2054 # the commas are inside one apt option's value (amd64,arm64)
apt_opts=(-o Dir::State::Lists="$apt_dir/lists" -o Dir::Etc::SourceList="$apt_dir/sources.list"
	-o Dir::Etc::SourceParts=/dev/null -o Dir::Cache="$apt_dir/cache"
	-o Dir::State::status="$apt_dir/status" -o APT::Architecture=amd64
	-o APT::Architectures=amd64,arm64 -o Acquire::Languages=none
	-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
	-o Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false)
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$cache/debs"
[ -f "$apt_dir/status" ] || : >"$apt_dir/status"
cat >"$apt_dir/sources.list" <<EOF
deb [arch=amd64,arm64] $mirror trixie main
deb [arch=amd64,arm64] $mirror trixie-backports main
EOF
updated=""
apt_update() {
	[ -z "$updated" ] || return 0
	say "updating the private apt lists in $apt_dir"
	apt-get "${apt_opts[@]}" -q update >"$apt_dir/update.log" 2>&1 ||
		die "apt-get update failed (log: $apt_dir/update.log)"
	updated=1
}
fetch() { # PKG VERSION [ARCH] -> path of the .deb in $cache/debs
	local pkg="$1" ver="$2" arch="${3:-}" f debs
	debs=("$cache/debs/${pkg}_${ver//:/%3a}_"*.deb)
	f=""
	[ -e "${debs[0]}" ] && f="${debs[0]}"
	if [ -z "$f" ]; then
		ls "$apt_dir/lists/"*_Packages* >/dev/null 2>&1 || apt_update
		say "fetching $pkg $ver${arch:+ ($arch)}"
		(cd "$cache/debs" && apt-get "${apt_opts[@]}" -q download "$pkg${arch:+:$arch}=$ver" >/dev/null 2>&1) ||
			{ apt_update; (cd "$cache/debs" && apt-get "${apt_opts[@]}" -q download "$pkg${arch:+:$arch}=$ver" >/dev/null 2>&1); } ||
			die "apt-get download $pkg=$ver failed: is it still in Debian's archive? (set BASE_VER/HDR_VER to one that is)"
		debs=("$cache/debs/${pkg}_${ver//:/%3a}_"*.deb)
		[ -e "${debs[0]}" ] || die "apt-get download $pkg=$ver left no .deb in $cache/debs"
		f="${debs[0]}"
	fi
	echo "$f"
}

# 2. The base tree: only what the build and checkpatch need.
src="$cache/src-$base_ver"
if [ ! -f "$src/.complete" ]; then
	deb="$(fetch "$base_pkg" "$base_ver")"
	say "extracting drivers/net/usb and scripts/checkpatch.pl from $(basename "$deb")"
	rm -rf "$src" && mkdir -p "$src"
	top="$base_pkg"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$base_pkg.tar.xz" | xz -dc |
		tar -x -C "$src" --strip-components=1 "$top/Makefile" "$top/drivers/net/usb" \
			"$top/include/linux/usb/usbnet.h" "$top/include/linux/usb/cdc_ncm.h" \
			"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" "$top/scripts/const_structs.checkpatch"
	touch "$src/.complete"
fi

# 3. Headers (and the amd64 kbuild tools, which serve the arm64 headers too).
hdr="$cache/hdr-$hdr_ver"
if [ ! -f "$hdr/.complete" ]; then
	rm -rf "$hdr" && mkdir -p "$hdr"
	for p in "linux-headers-$hdr_abi-common" "linux-kbuild-$hdr_abi"; do
		dpkg-deb -x "$(fetch "$p" "$hdr_ver")" "$hdr"
	done
	touch "$hdr/.complete"
fi
kdirs=()
for a in $archs; do
	k="$hdr/usr/src/linux-headers-$hdr_abi-$a"
	if [ ! -f "$k/.config" ]; then
		if deb="$(fetch "linux-headers-$hdr_abi-$a" "$hdr_ver" "$a")"; then
			dpkg-deb -x "$deb" "$hdr"
		else
			say "no $a headers: $a not built"
			continue
		fi
	fi
	# The headers include their -common part and name their output
	# directory by absolute /usr/src paths: point them into $hdr, also
	# when they were pointed into a cache that was copied to this one.
	sed -i "s#^KBUILD_OUTPUT=.*/usr/src/#KBUILD_OUTPUT=$hdr/usr/src/#; s#^include .*/usr/src/#include $hdr/usr/src/#" "$k/Makefile"
	kdirs+=("$a:$k")
done
[ ${#kdirs[@]} -gt 0 ] || die "no headers to build against"

# 4. The compiler the headers were built with (gcc-14): the host's, or a
# Debian 13 root made once with debootstrap.
root=""
need_cc=(gcc-14)
case " $archs " in *" arm64 "*) need_cc+=(aarch64-linux-gnu-gcc-14) ;; esac
host_has_cc=1
for c in "${need_cc[@]}"; do command -v "$c" >/dev/null || host_has_cc=""; done
if [ -z "$host_has_cc" ]; then
	root="$cache/root"
	if [ ! -f "$root/.complete" ]; then
		command -v debootstrap >/dev/null || {
			say "installing debootstrap (to make a Debian 13 build root with gcc-14)"
			apt-get install -y -q --no-install-recommends debootstrap >/dev/null
		}
		say "making a Debian 13 build root with gcc-14 in $root (once; a few minutes)"
		rm -rf "$root"
		nice -n 10 debootstrap --variant=minbase \
			--include=gcc-14,gcc-14-aarch64-linux-gnu,make,libc6-dev,dwarves,bc,kmod,libelf1t64 \
			trixie "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
			die "debootstrap failed (log: $cache/debootstrap.log)"
		touch "$root/.complete"
	fi
fi
in_root() { # CMD... in the build root (or here), with $cache at the same path
	if [ -z "$root" ]; then
		"$@"
		return
	fi
	# shellcheck disable=SC2016 # the inner bash expands these
	unshare -m bash -c '
		r="$0" c="$1"; shift
		for d in /proc /dev "$c"; do mkdir -p "$r$d"; mount --bind "$d" "$r$d"; done
		exec chroot "$r" env PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/tmp LC_ALL=C.UTF-8 "$@"' \
		"$root" "$cache" "$@"
}

# 5. A git tree of the base, the series applied with git am.
work="$cache/work"
rm -rf "$work" && mkdir -p "$work"
repo="$work/tree"
cp -a "$src/." "$repo/" && rm -f "$repo/.complete"
gitc=(git -C "$repo" -c user.name=check -c user.email=check@invalid -c commit.gpgsign=false)
"${gitc[@]}" init -q
"${gitc[@]}" add -A
"${gitc[@]}" commit -q -m "base: $base_pkg $base_ver"
patches=()
for p in "$series"/[0-9][0-9][0-9][0-9]-*.patch; do
	case "$(basename "$p")" in 0000-*) continue ;; esac
	patches+=("$p")
done
say "git am: ${#patches[@]} patches of $series on $base_pkg $base_ver"
"${gitc[@]}" am -q "${patches[@]}" || die "git am failed: the series does not apply cleanly to $base_pkg $base_ver"

# 6. At each patch: build and checkpatch.
each_modules="usbnet cdc_ether cdc_ncm cdc_mbim ax88179_178a"
each_built() { # DIR: every module of $each_modules was built in DIR
	local m
	for m in $each_modules; do
		[ -f "$1/drivers/net/usb/$m.ko" ] || return 1
	done
}
fail=0
i=0
checkpatch="$src/scripts/checkpatch.pl"
for c in $("${gitc[@]}" rev-list --reverse HEAD~${#patches[@]}..HEAD); do
	p="${patches[$i]}"
	i=$((i + 1))
	subj="$("${gitc[@]}" log -1 --format=%s "$c")"
	d="$work/at-$i"
	mkdir -p "$d"
	"${gitc[@]}" archive "$c" drivers/net/usb include/linux/usb | tar -x -C "$d"
	{
		echo "NOSTDINC_FLAGS += -I\$(src)/../../../include"
		# shellcheck disable=SC2086 # a list of names, split on purpose
		echo "obj-m := $(printf '%s.o ' $each_modules)"
	} >"$d/drivers/net/usb/Kbuild"
	res=""
	for ak in "${kdirs[@]}"; do
		a="${ak%%:*}" k="${ak#*:}"
		b="$work/at-$i-$a"
		rm -rf "$b" && cp -a "$d" "$b"
		args=()
		[ "$a" = amd64 ] || args=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
		if in_root nice -n 10 make -C "$k" M="$b/drivers/net/usb" "${args[@]}" -j"$jobs" modules >"$b.log" 2>&1 &&
			each_built "$b"; then
			if grep -qiE 'warning|error' "$b.log"; then
				res+=" $a:WARNINGS($b.log)"
				fail=1
			else
				res+=" $a:ok"
				if [ -n "${PREFIX_OUT:-}" ]; then
					po="$PREFIX_OUT/$hdr_abi-$a/at-$i"
					rm -rf "$po" && mkdir -p "$po"
					for m in $each_modules; do cp "$b/drivers/net/usb/$m.ko" "$po/"; done
					echo "$base_pkg $base_ver + $(basename "$series") 1-$i of ${#patches[@]}: $subj" >"$po/SOURCE"
				fi
			fi
		else
			res+=" $a:FAILED($b.log)"
			fail=1
		fi
	done
	# --no-tree: no kernel history here, so checkpatch cannot look up a
	# Fixes: id; each is checked by hand (../net/README.md says where)
	cp=$(perl "$checkpatch" --strict --no-tree --ignore UNKNOWN_COMMIT_ID "$p" 2>&1 | sed -n 's/^total: //p' || true)
	case "$cp" in "0 errors, 0 warnings, 0 checks"*) ;; *) fail=1 ;; esac
	echo "$i/${#patches[@]} $subj: build$res; checkpatch --strict: $cp"
done
cover="$series/0000-cover-letter.patch"
if [ -f "$cover" ]; then
	cp=$(perl "$checkpatch" --strict --no-tree "$cover" 2>&1 | sed -n 's/^total: //p' || true)
	case "$cp" in "0 errors, 0 warnings, 0 checks"*) ;; *) fail=1 ;; esac
	echo "cover letter: checkpatch --strict: $cp"
fi
# The lab's dummy_hcd with a bus of a fixed rate (lab only, never
# installed), from the base tree's dummy_hcd.c: ARCH KDIR OURS_DIR.
lab_bus() {
	local a="$1" k="$2" o="$3" b="$work/labbus-$1" args=()
	local f="drivers/usb/gadget/udc/dummy_hcd.c"
	if [ ! -f "$src/$f" ]; then
		say "extracting $f from $base_pkg"
		dpkg-deb --fsys-tarfile "$(fetch "$base_pkg" "$base_ver")" | tar -xO "./usr/src/$base_pkg.tar.xz" | xz -dc |
			tar -x -C "$src" --strip-components=1 "$base_pkg/$f"
	fi
	rm -rf "$b" && mkdir -p "$b/drivers/usb/gadget/udc"
	cp "$src/$f" "$b/$f"
	patch -d "$b" -p1 -s --batch --forward --no-backup-if-mismatch <"$here/../lab/7.x/dummy_hcd-rate-cap.patch" ||
		{ echo "lab bus: ../lab/7.x/dummy_hcd-rate-cap.patch does not apply to $base_pkg $base_ver"; return 1; }
	echo "obj-m := dummy_hcd.o" >"$b/drivers/usb/gadget/udc/Kbuild"
	[ "$a" = amd64 ] || args=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	if ! in_root nice -n 10 make -C "$k" M="$b/drivers/usb/gadget/udc" "${args[@]}" modules >"$b.log" 2>&1 ||
		grep -qiE 'warning|error' "$b.log"; then
		echo "lab bus: dummy_hcd $a build FAILED or warned ($b.log)"
		return 1
	fi
	cp "$b/drivers/usb/gadget/udc/dummy_hcd.ko" "$o/"
	mkdir -p "$MODULES_OUT/stock-lab-$hdr_abi-$a"
	cp "$b/drivers/usb/gadget/udc/dummy_hcd.ko" "$MODULES_OUT/stock-lab-$hdr_abi-$a/"
	echo "$base_pkg $base_ver dummy_hcd.c + lab/7.x/dummy_hcd-rate-cap.patch (lab only); usbnet and its drivers: the guest's own" \
		>"$MODULES_OUT/stock-lab-$hdr_abi-$a/SOURCE"
	echo "lab bus: rate-capped dummy_hcd for $hdr_abi-$a in $o and $MODULES_OUT/stock-lab-$hdr_abi-$a"
}

# 7. On request, all modules on usbnet at the last patch (what build.sh
# builds for 6.x kernels), into $MODULES_OUT/$hdr_abi-ARCH/.
if [ -n "${MODULES_OUT:-}" ] && [ "$fail" = 0 ]; then
	modules="usbnet asix ax88179_178a cdc_ether cdc_eem cdc_ncm huawei_cdc_ncm cdc_mbim dm9601 sr9700 sr9800 smsc75xx smsc95xx gl620a net1080 plusb rndis_host cdc_subset zaurus mcs7830 int51x1 cx82310_eth kalmia qmi_wwan sierra_net lg-vl600 ch9200 aqc111"
	for ak in "${kdirs[@]}"; do
		a="${ak%%:*}" k="${ak#*:}"
		b="$work/all-$a"
		rm -rf "$b" && cp -a "$work/at-$i" "$b"
		{
			echo "NOSTDINC_FLAGS += -I\$(src)/../../../include"
			# shellcheck disable=SC2086 # $modules is a list of names, split on purpose
			echo "obj-m := $(printf '%s.o ' $modules)"
			echo "asix-y := asix_devices.o asix_common.o ax88172a.o"
		} >"$b/drivers/net/usb/Kbuild"
		args=()
		[ "$a" = amd64 ] || args=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
		if in_root nice -n 10 make -C "$k" M="$b/drivers/net/usb" "${args[@]}" -j"$jobs" modules >"$b.log" 2>&1 &&
			! grep -qiE 'warning|error' "$b.log"; then
			o="$MODULES_OUT/$hdr_abi-$a"
			mkdir -p "$o"
			for m in $modules; do cp "$b/drivers/net/usb/$m.ko" "$o/"; done
			echo "$base_pkg $base_ver + $(basename "$series") (${#patches[@]} patches), checked by check.sh" >"$o/SOURCE"
			echo "modules: $(echo "$modules" | wc -w) for $hdr_abi-$a in $o"
			[ -z "${LAB_BUS:-}" ] || lab_bus "$a" "$k" "$o" || fail=1
			if [ -n "${PREFIX_OUT:-}" ] && [ -f "$o/dummy_hcd.ko" ]; then
				for po in "$PREFIX_OUT/$hdr_abi-$a"/at-*/; do cp "$o/dummy_hcd.ko" "$po"; done
			fi
		else
			echo "modules: $a build FAILED or warned ($b.log)"
			fail=1
		fi
	done
fi
if [ "$fail" = 0 ]; then
	echo "check.sh: OK: ${#patches[@]} patches apply to $base_pkg $base_ver, build at every patch ($archs), checkpatch --strict clean"
else
	echo "check.sh: FAILED (logs in $work)"
	exit 1
fi
