#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build wirespeed's usbnet (RX through NAPI + GRO, polled in softirq by
# default - threaded polling is opt-in through /sys/class/net/DEV/threaded -
# plus BQL) and every usbnet minidriver, for one kernel of the 6.1, 6.12 or
# 6.18 family or a tested 7.x release (7.0-7.3: one series, the 7.x family).
# The patches in patches/FAMILY/ are applied at build time to the kernel's
# own source; nothing of the kernel is kept here.
#
#   build.sh --kver KVER [--kdir DIR] [--ksrc DIR] [--debver VER]
#            [--out DIR] [--cache DIR] [--source-only] [--check-kver]
#            [--no-series] [--series-upto N] [--extra-patch FILE]... [--lab-bus]
#
# --kver  the kernel release (uname -r): 6.1.0-56-amd64, 6.12.117+deb12-amd64,
#         6.18.20+rpt-rpi-v8, 6.18.8-current-rockchip64, 7.0.0-15-generic,
#         7.1.4-200.fc44.x86_64, 7.3.4+deb13-amd64, ... any 6.1.y, 6.12.y,
#         6.18.y, 7.0.y-7.3.y (dkms.conf's BUILD_EXCLUSIVE_KERNEL).
# --kdir  the kernel's build directory (DKMS passes /lib/modules/KVER/build;
#         without it, /lib/modules/KVER/build when the headers are installed).
#         For Debian's own kernel names the headers packages are otherwise
#         fetched with apt-get download and unpacked in the cache (nothing is
#         installed); any other kernel needs its headers installed. An arm64
#         kernel on an amd64 host (6.12.117+deb12-arm64): its headers through
#         private arm64 apt lists in the cache, this host's linux-kbuild, and
#         aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu).
# --ksrc  a kernel source tree of the kernel's X.Y to take usbnet from (also
#         KSRC=DIR in the environment, which DKMS passes on). Without it the
#         source is an installed linux-source-X.Y (/usr/src/linux-source-X.Y.tar.xz),
#         else linux-source-X.Y fetched with apt-get download, the version
#         closest to the kernel's patch level (--debver VER picks one), else
#         kernel.org's linux-X.Y.Z.tar.xz of the kernel's own X.Y.Z (from its
#         headers' Makefile), checked against the directory's sha256sums.asc.
# --kernel-org   skip linux-source-X.Y: take kernel.org's release directly.
# --upstream VER the kernel.org release to take (X.Y.Z or X.Y, of the
#         kernel's X.Y) when the kernel's patch level is unknown or not wanted;
#         implies --kernel-org.
# --mirror URL   where kernel.org's releases are (also WIRESPEED_KERNEL_MIRROR;
#         default https://cdn.kernel.org/pub/linux/kernel): URL/vN.x/linux-X.Y.Z.tar.xz
#         and URL/vN.x/sha256sums.asc. Needs curl or wget.
# --source-only  fetch and unpack the source, print its directory, stop.
# --check-kver   only say whether KVER is a kernel these patches are for.
# --no-series    build the stock sources (lab comparisons only).
# --series-upto N  only the series' first N patches (lab only: every prefix
#                run in the lab, experiments/usbnet-round5/prefix-runs.sh).
# --extra-patch  also apply FILE after the series (lab/*.patch; lab only; a
#                name not found as given is looked up in lab/FAMILY/).
# --lab-bus      also build dummy_hcd with lab/FAMILY/dummy_hcd-rate-cap.patch
#                (rate_mbit=N: the VM lab's fixed-rate USB bus; lab only).
# The build says which source it used, and when that source's patch level
# differs from the kernel's.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
kver="" kdir="" ksrc="${KSRC:-}" debver="" out="" source_only="" check_only="" series=1 upto=""
kernel_org="" upstream="" mirror="${WIRESPEED_KERNEL_MIRROR:-https://cdn.kernel.org/pub/linux/kernel}"
extra=() lab_bus=""
if [ "$(id -u)" = 0 ]; then base=/var/cache/wirespeed; else base="${XDG_CACHE_HOME:-$HOME/.cache}/wirespeed"; fi
cache="${WIRESPEED_CACHE:-$base}/usbnet"

die() { echo "wirespeed-usbnet: $*" >&2; exit 1; }
say() { echo "wirespeed-usbnet: $*" >&2; }

need_arg() { if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value (see --help)"; fi; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) need_arg "$@"; kver="$2"; shift 2 ;;
	--kdir) need_arg "$@"; kdir="$2"; shift 2 ;;
	--ksrc) need_arg "$@"; ksrc="$2"; shift 2 ;;
	--debver) need_arg "$@"; debver="$2"; shift 2 ;;
	--out) need_arg "$@"; out="$2"; shift 2 ;;
	--cache) need_arg "$@"; cache="$2"; shift 2 ;;
	--kernel-org) kernel_org=1; shift ;;
	--upstream) need_arg "$@"; upstream="$2"; kernel_org=1; shift 2 ;;
	--mirror) need_arg "$@"; mirror="$2"; shift 2 ;;
	--source-only) source_only=1; shift ;;
	--check-kver) check_only=1; shift ;;
	--no-series) series=""; shift ;;
	--series-upto) need_arg "$@"; upto="$2"; shift 2
		case "$upto" in *[!0-9]* | 0*) die "--series-upto $upto: give the number of patches (1, 2, ...)" ;; esac ;;
	--lab-bus) lab_bus=1; shift ;;
	--extra-patch) need_arg "$@"; extra+=("$2"); shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done

[ -n "$kver" ] || die "--kver is required (for example $(uname -r), the running kernel)"

# The kernels it builds for are one rule, dkms.conf's BUILD_EXCLUSIVE_KERNEL,
# and one refusal, dkms.conf's wirespeed_usbnet_refusal: DKMS and this
# script agree. Refuse before fetching or building anything.
set +u; kernelver=""
# shellcheck source=kernel/usbnet/dkms.conf # (the path from the top of the tree, where make lint runs)
. "$here/dkms.conf" || die "cannot read $here/dkms.conf"
set -u
[ -n "${BUILD_EXCLUSIVE_KERNEL:-}" ] || die "no BUILD_EXCLUSIVE_KERNEL in $here/dkms.conf"
if ! [[ "$kver" =~ $BUILD_EXCLUSIVE_KERNEL ]]; then
	wirespeed_usbnet_refusal "$kver"
	exit 1
fi
# xy: the kernel's X.Y (its linux-source-X.Y, the kernel.org directory);
# family: the series, patches/FAMILY (7.0-7.3 share one, patches/7.x).
xy="${BASH_REMATCH[1]}"
case "$xy" in
7.*) family=7.x ;;
*) family="$xy" ;;
esac
# A family the rule takes must have its series here (--check-kver too).
[ -d "$here/patches/$family" ] ||
	die "kernel $kver is of the $family family, but this copy of wirespeed-usbnet has no patches/$family (in $here): use a wirespeed release that carries it"
if [ -n "$check_only" ]; then
	if [ "$family" = "$xy" ]; then
		say "kernel $kver accepted (the $family family: patches/$family)"
	else
		say "kernel $kver accepted (Linux $xy, the $family family: patches/$family)"
	fi
	exit 0
fi

for tool in tar patch make; do
	command -v "$tool" >/dev/null || die "$tool is missing (apt-get install tar patch make)"
done

# sublevel_of_kdir DIR: the SUBLEVEL of the kernel whose build directory is
# DIR, from its Makefile or the one it includes (Debian's arch headers
# include the -common ones). Empty when not found.
sublevel_of_kdir() {
	local mk="$1/Makefile" inc n
	[ -f "$mk" ] || return 0
	n="$(sed -n 's/^SUBLEVEL[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$mk" | head -n 1)"
	if [ -z "$n" ]; then
		inc="$(sed -n 's/^include[[:space:]]\+\(\/.*Makefile\)[[:space:]]*$/\1/p' "$mk" | head -n 1)"
		[ -n "$inc" ] && [ -f "$inc" ] &&
			n="$(sed -n 's/^SUBLEVEL[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$inc" | head -n 1)"
	fi
	echo "$n"
}
# family_of_tree DIR: "6.12" for a source tree whose Makefile says 6.12.
family_of_tree() {
	local v p
	v="$(sed -n 's/^VERSION[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$1/Makefile" 2>/dev/null | head -n 1)"
	p="$(sed -n 's/^PATCHLEVEL[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$1/Makefile" 2>/dev/null | head -n 1)"
	[ -n "$v" ] && [ -n "$p" ] && echo "$v.$p"
}
sublevel_of_tree() { sed -n 's/^SUBLEVEL[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$1/Makefile" 2>/dev/null | head -n 1; }

mkdir -p "$cache"
host_arch="$(dpkg --print-architecture 2>/dev/null || uname -m)"

# Another architecture's packages (an arm64 kernel's headers on an amd64
# host) come from a private apt: the host's sources.list, but its own
# architecture, package lists, package cache and an empty dpkg status, all
# under $cache/apt-ARCH. The host's dpkg and apt state are not touched
# (no dpkg --add-architecture).
foreign_apt() { # ARCH apt-get|apt-cache ARGS...
	local a="$1" d="$cache/apt-$1" cmd="$2"
	shift 2
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	[ -f "$d/status" ] || : >"$d/status"
	"$cmd" -o APT::Architecture="$a" -o APT::Architectures="$a" \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" \
		-o Dir::State::status="$d/status" "$@"
}
# foreign_update ARCH: apt-get update of the private lists, once per run
# (the stamp holds this run's process id; fetch runs in subshells).
foreign_update() {
	local d="$cache/apt-$1"
	[ "$(cat "$d/.updated" 2>/dev/null)" != "$$" ] || return 0
	command -v apt-get >/dev/null || die "no apt-get to fetch $1 packages with: give --kdir DIR (the headers of $kver)"
	mkdir -p "$d"
	say "updating the private $1 package lists in $d"
	# Only the Packages lists: no translations, no AppStream metadata. A
	# source that serves no $1 lists fails the update but not the build:
	# whether the package is then known decides.
	foreign_apt "$1" apt-get -q -o Acquire::Languages=none \
		-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false \
		update >"$d/update.log" 2>&1 ||
		say "apt-get update of the $1 lists reported errors (the package may still be found; log: $d/update.log)"
	echo "$$" >"$d/.updated"
}
# cached_deb PKG VERSION ARCH -> the package's .deb (_all, else _ARCH) in the cache, or nothing
cached_deb() {
	local f
	for f in "$cache/${1}_${2//:/%3a}_all.deb" "$cache/${1}_${2//:/%3a}_$3.deb"; do
		if [ -e "$f" ]; then echo "$f"; return; fi
	done
}
fetch() { # package[=version] [ARCH] -> the .deb in the cache (no version: apt's candidate)
	# ARCH other than this machine's: fetched with the private apt (foreign_apt).
	local pkg="${1%%=*}" ver="" arch="${2:-$host_arch}" deb apt_get=(apt-get) apt_cache=(apt-cache) foreign=""
	[ "$pkg" = "$1" ] || ver="${1#*=}"
	if [ "$arch" != "$host_arch" ]; then
		foreign="$arch"
		apt_get=(foreign_apt "$arch" apt-get) apt_cache=(foreign_apt "$arch" apt-cache)
		ls "$cache/apt-$arch/lists/"*_Packages* >/dev/null 2>&1 || foreign_update "$arch"
	fi
	candidate() { "${apt_cache[@]}" policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p'; }
	if [ -z "$ver" ]; then
		command -v apt-cache >/dev/null || die "$pkg is not installed and there is no apt-cache to find it"
		ver="$(candidate)"
		if [ -n "$foreign" ] && { [ -z "$ver" ] || [ "$ver" = "(none)" ]; }; then
			foreign_update "$arch"
			ver="$(candidate)"
		fi
		if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
			[ -z "$foreign" ] || die "Debian's $arch archive knows no $pkg (private lists in $cache/apt-$arch, updated now; is it a kernel Debian still carries, and is the archive in the host's sources.list?), or give --kdir DIR"
			die "apt knows no $pkg (run apt-get update with Debian's archive in sources.list; or install it, or give --kdir)"
		fi
	fi
	deb="$(cached_deb "$pkg" "$ver" "$arch")"
	if [ -z "$deb" ]; then
		command -v apt-get >/dev/null || die "$pkg $ver is neither installed nor in $cache, and there is no apt-get to fetch it"
		say "fetching $pkg $ver${foreign:+ ($arch)}"
		download() { (cd "$cache" && "${apt_get[@]}" download -q "$pkg=$ver" >/dev/null 2>&1); }
		if ! download; then
			# Stale private lists can name a version the archive has dropped.
			if [ -z "$foreign" ] || ! { foreign_update "$arch" && download; }; then
				die "apt-get download $pkg=$ver${foreign:+ ($arch, private lists in $cache/apt-$arch)} failed (is the Debian archive reachable, and apt-get update done? Or install the package, or give --ksrc/--kdir)"
			fi
		fi
		deb="$(cached_deb "$pkg" "$ver" "$arch")"
	fi
	echo "$deb"
}

# kbuild_version PKG HVER -> the linux-kbuild version to take for headers of
# version HVER: HVER when it is cached or still in the archive, else apt's
# candidate when that is newer - what apt itself installs, since Debian's
# headers depend on linux-kbuild-X.Y (>= HVER) (a security update of
# linux-kbuild-6.1 drops the version the headers were built beside).
kbuild_version() {
	local pkg="$1" hver="$2" cand
	if [ -n "$(cached_deb "$pkg" "$hver" "$host_arch")" ] || ! command -v apt-cache >/dev/null ||
		apt-cache madison "$pkg" 2>/dev/null | awk -F'|' -v v="$hver" '{ gsub(/ /, "", $2) } $2 == v { f = 1 } END { exit !f }'; then
		echo "$hver"
		return
	fi
	cand="$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')"
	if [ -n "$cand" ] && [ "$cand" != "(none)" ] && dpkg --compare-versions "$cand" gt "$hver"; then
		say "$pkg $hver is no longer in the archive; taking $cand (the headers ask for >= $hver)"
		echo "$cand"
		return
	fi
	echo "$hver"
}

# cross_gcc ARCH PREFIX [KDIR]: die, saying what to install, unless the
# cross compiler for an ARCH kernel is here. Debian's headers name the gcc
# they use (.kernelvariables: CC = $(CROSS_COMPILE)gcc-12).
cross_gcc() {
	local p="${CROSS_COMPILE:-$2}" v=""
	# Debian's headers name their gcc in .kernelvariables; others have none
	if [ -n "${3:-}" ] && [ -f "$3/.kernelvariables" ]; then
		v="$(sed -n 's/^CC[[:space:]]*=.*gcc-\([0-9][0-9]*\)[[:space:]]*$/\1/p' "$3/.kernelvariables" | head -n 1)"
	fi
	command -v "${p}gcc${v:+-$v}" >/dev/null ||
		die "$kver is an $1 kernel: building it on this $(uname -m) machine needs ${p}gcc${v:+-$v}: apt-get install gcc-${2%-}${v:+ (or gcc-$v-${2%-} where that is not gcc $v)}; or set CROSS_COMPILE to another compiler's prefix"
}

# 1. The kernel's build directory: given, installed, or (Debian's own
# kernels) fetched. Another architecture's kernel (arm64 on amd64): its
# headers and -common from the private apt (foreign_apt), and this host's
# own linux-kbuild of the same version, whose scripts and tools run here.
if [ -z "$kdir" ] && [ -f "/lib/modules/$kver/build/Makefile" ]; then
	kdir="/lib/modules/$kver/build"
fi
if [ -z "$kdir" ] && [ -z "$source_only" ]; then
	hdrpkgs=()
	if [[ "$kver" =~ ^(6\.12\.[0-9]+\+(deb12|deb13|bpo))-(.+)$ ]]; then
		abi="${BASH_REMATCH[1]}" flavour="${BASH_REMATCH[3]}"
		hdrpkgs=("linux-headers-$kver" "linux-headers-$abi-common" "linux-kbuild-$abi")
	elif [[ "$kver" =~ ^(6\.1\.0-[0-9]+)-(.+)$ ]]; then
		abi="${BASH_REMATCH[1]}" flavour="${BASH_REMATCH[2]}"
		hdrpkgs=("linux-headers-$kver" "linux-headers-$abi-common" "linux-kbuild-6.1")
	fi
	if [ ${#hdrpkgs[@]} = 0 ] && [[ "$kver" =~ ^7\.[0-3]\.[0-9]+\+deb1[34]-(amd64|arm64)$ ]]; then
		# Debian 13's and 14's 7.x headers: not in a Debian 12 host's apt
		# lists, and built with gcc-14; net-next/check.sh fetches them
		# through lists of its own and builds in a Debian 13 root.
		die "no headers for $kver installed: build.sh does not fetch Debian 13's 7.x headers (they are not in this host's apt lists and need gcc-14). Install linux-headers-$kver and give --kdir, or, for 7.3.4+deb13-amd64 and -arm64, run: sudo make -C kernel/usbnet/net-next modules-7.x (the 28 modules of patches/7.x into kernel/usbnet/out/7.3.4+deb13-ARCH/; lab-modules-7.x adds the lab bus of --lab-bus)"
	fi
	[ ${#hdrpkgs[@]} -gt 0 ] ||
		die "no headers for $kver: install them (/lib/modules/$kver/build; on Raspberry Pi OS: apt-get install linux-headers-$kver), or give --kdir DIR"
	case "$flavour" in
	*arm64*) farch=arm64 ;;
	*rpi*) farch=armel ;; # Debian's rpi flavour (Pi OS's names never get here)
	*amd64*) farch=amd64 ;;
	*) farch="$host_arch" ;;
	esac
	if [ "$farch" != "$host_arch" ]; then
		case "$farch/$host_arch" in
		arm64/amd64) cross_gcc arm64 aarch64-linux-gnu- ;;
		amd64/arm64) cross_gcc amd64 x86_64-linux-gnu- ;;
		*) die "no headers for $kver installed, and they are $farch packages on this $host_arch machine: build.sh fetches arm64 headers on amd64 (and amd64 on arm64) only; install linux-headers-$kver for $farch and give --kdir DIR (the tree's scripts must run here)" ;;
		esac
	fi
	command -v dpkg-deb >/dev/null || die "dpkg-deb is missing: install the headers of $kver or give --kdir DIR"
	hdr="$cache/headers-$kver"
	if [ ! -f "$hdr/.complete" ]; then
		rm -rf "$hdr" && mkdir -p "$hdr"
		# The arch package picks the version; -common (arch all) comes from
		# the same lists, linux-kbuild from this machine's.
		first="$(fetch "${hdrpkgs[0]}" "$farch")"
		hver="$(dpkg-deb -f "$first" Version)"
		common="$(fetch "${hdrpkgs[1]}=$hver" "$farch")"
		kbuild="$(fetch "${hdrpkgs[2]}=$(kbuild_version "${hdrpkgs[2]}" "$hver")")"
		for deb in "$first" "$common" "$kbuild"; do
			dpkg-deb -x "$deb" "$hdr"
		done
		# The arch package includes the common one by absolute path.
		sed -i "s#^include /usr/src/#include $hdr/usr/src/#" "$hdr/usr/src/linux-headers-$kver/Makefile"
		echo "$hver" >"$hdr/.complete"
	fi
	kdir="$hdr/usr/src/linux-headers-$kver"
fi
if [ -n "$kdir" ]; then
	kdir="$(cd "$kdir" 2>/dev/null && pwd)" || die "--kdir: no such directory"
	[ -f "$kdir/Makefile" ] || die "no kernel build directory at $kdir (install linux-headers-$kver, or give --kdir DIR)"
fi

# The kernel's patch level: its build directory knows it (Debian's
# 6.1.0-N names do not carry it); else its name. ABI names X.Y.0-N-FLAVOUR
# whose headers say SUBLEVEL 0 are Ubuntu's: Ubuntu keeps SUBLEVEL 0 and
# counts stable updates in N, and names the upstream release it is based on
# in /proc/version_signature ("Ubuntu 7.0.0-15.15-generic 7.0.5") - known
# for the running kernel only.
sub=""
if [ -n "$kdir" ]; then
	sub="$(sublevel_of_kdir "$kdir")"
fi
abi_name=""
[[ "$kver" =~ ^[0-9]+\.[0-9]+\.0-[0-9]+-[^.]+$ ]] && abi_name=1
if [ -n "$abi_name" ] && [ "${sub:-0}" = 0 ]; then
	sub=""
	sig="${WIRESPEED_VERSION_SIGNATURE:-/proc/version_signature}"
	if [ -r "$sig" ] && { [ "$kver" = "$(uname -r)" ] || [ -n "${WIRESPEED_VERSION_SIGNATURE:-}" ]; }; then
		v="$(awk '{ print $NF; exit }' "$sig" 2>/dev/null || true)"
		if [[ "$v" =~ ^([0-9]+\.[0-9]+)\.([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" = "$xy" ]; then
			sub="${BASH_REMATCH[2]}"
		fi
	fi
elif [ -z "$sub" ] && [[ "$kver" =~ ^[0-9]+\.[0-9]+\.([0-9]+) ]] && [ "${BASH_REMATCH[1]}" != 0 ]; then
	sub="${BASH_REMATCH[1]}"
fi
kpl="$xy${sub:+.$sub}"

# 2. The source: --ksrc/KSRC, an installed linux-source-X.Y, one fetched
# with apt-get download, or kernel.org's release. Only what the build needs
# is unpacked, into a directory that is renamed into place when complete.
files=(drivers/net/usb include/linux/usb/usbnet.h include/linux/usb/cdc_ncm.h
	drivers/usb/gadget/udc/dummy_hcd.c scripts/checkpatch.pl scripts/spelling.txt
	scripts/const_structs.checkpatch)
differs() { # SOURCE_PATCHLEVEL WHAT -> a note when it is not the kernel's
	if [ -z "$sub" ]; then
		say "the kernel's patch level is unknown (not in its name, nor in its headers): $2 is $1"
	elif [ "$1" != "$xy.$sub" ]; then
		say "note: $2 is $1, the kernel is $kpl: usbnet is built from a source of another patch level"
	fi
}
# unpack TOP WHAT CMD...: CMD writes a tar.xz of a tree under TOP/ to its
# stdout; only $files go to $src, through $src.part.PID. 0 when unpacked.
unpack() {
	local top="$1" what="$2" part="$src.part.$$"
	shift 2
	rm -rf "$part" && mkdir -p "$part"
	tmp_dirs+=("$part")
	if ! "$@" | tar -xJ -C "$part" --strip-components=1 "${files[@]/#/$top/}" "$top/Makefile"; then
		rm -rf "$part"
		say "could not unpack $what"
		return 1
	fi
	echo "$srcname" >"$part/.complete"
	rm -rf "$src" && mv "$part" "$src"
}
tmp_dirs=()
cleanup() { local d; for d in "${tmp_dirs[@]+"${tmp_dirs[@]}"}"; do rm -rf "$d"; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP # so that the EXIT trap runs on Ctrl-C too
not_found=() # why each source was not taken

# debian_source: an installed or fetched linux-source-X.Y; 1 when none.
debian_source() {
	local pkg="linux-source-$xy" installed from deb
	installed="$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$pkg" 2>/dev/null || true)"
	if [ -z "$debver" ] && [[ "$installed" == "ii "* ]] && [ -f "/usr/src/$pkg.tar.xz" ]; then
		debver="${installed#ii }"
		from="installed"
	else
		from="Debian's archive"
		if [ -z "$debver" ]; then
			if ! command -v apt-cache >/dev/null; then
				not_found+=("no $pkg installed, and no apt to fetch one")
				return 1
			fi
			# The version closest to the kernel's patch level (ties: the newer).
			debver="$(apt-cache madison "$pkg" 2>/dev/null | awk -F'|' -v want="${sub:--1}" '
				{ v = $2; gsub(/ /, "", v); split(v, a, /[.-]/); n = a[3] + 0
				  d = want < 0 ? -n : (n > want ? n - want : want - n)
				  if (best == "" || d < bd || (d == bd && n > bn)) { best = v; bd = d; bn = n } }
				END { print best }')"
			if [ -z "$debver" ]; then
				not_found+=("no $pkg installed, and apt knows none (Debian's archive carries linux-source-6.1, -6.12, -7.2 and -7.3; not 6.18)")
				return 1
			fi
		fi
	fi
	src="$cache/src-$pkg-$debver"
	srcname="$pkg $debver ($from)"
	[ -f "$src/.complete" ] && return 0
	if [ "$from" = installed ]; then
		say "extracting drivers/net/usb from the installed $pkg $debver"
		unpack "$pkg" "the installed $pkg $debver" cat "/usr/src/$pkg.tar.xz" || die "could not unpack /usr/src/$pkg.tar.xz"
		return 0
	fi
	command -v dpkg-deb >/dev/null || { not_found+=("dpkg-deb is missing to unpack $pkg"); return 1; }
	if ! deb="$(fetch "$pkg=$debver")"; then
		not_found+=("apt-get download $pkg=$debver failed")
		return 1
	fi
	say "extracting drivers/net/usb from $(basename "$deb")"
	debtar() { dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz"; }
	unpack "$pkg" "$pkg $debver" debtar || die "could not unpack $pkg $debver ($deb)"
}

# http_get URL FILE: 0 when fetched; else 1 and http_err says why.
http_get() {
	local code
	http_err=""
	if command -v curl >/dev/null; then
		code="$(curl -sS -L --proto '=http,https' -o "$2" -w '%{http_code}' "$1" 2>"$2.err" || true)"
		if [ "$code" = 200 ]; then rm -f "$2.err"; return 0; fi
		case "$code" in
		404) http_err="not found there (HTTP 404)" ;;
		000 | "") http_err="$(tail -n 1 "$2.err" 2>/dev/null) (no answer)" ;;
		*) http_err="HTTP $code" ;;
		esac
	elif command -v wget >/dev/null; then
		if wget -q -O "$2" "$1" 2>"$2.err"; then rm -f "$2.err"; return 0; fi
		http_err="wget failed (exit $?: 8 is an error answer such as 404, 4 a network failure)"
	else
		http_err="neither curl nor wget is installed"
	fi
	rm -f "$2" "$2.err"
	return 1
}

# kernel_org_source: kernel.org's linux-X.Y.Z.tar.xz of the kernel's own
# X.Y.Z (X.Y when the patch level is 0 or unknown), checked against the
# directory's sha256sums.asc; 1 when it could not be had.
kernel_org_source() {
	local v="${upstream:-$xy${sub:+.$sub}}" major name dir part sums want got check
	[[ ! "$v" =~ ^[0-9]+\.[0-9]+\.0$ ]] || v="${v%.0}" # kernel.org names X.Y.0 linux-X.Y
	if ! [[ "$v" =~ ^([0-9]+)\.([0-9]+)(\.[0-9]+)?$ ]] || [ "${BASH_REMATCH[1]}.${BASH_REMATCH[2]}" != "$xy" ]; then
		die "--upstream $upstream: give a kernel.org release of Linux $xy (the kernel's X.Y): $xy.N or $xy"
	fi
	major="${BASH_REMATCH[1]}" name="linux-$v.tar.xz"
	dir="${mirror%/}/v$major.x"
	src="$cache/src-linux-$v"
	if [ -f "$src/.complete" ]; then
		srcname="$(cat "$src/.complete")"
		return 0
	fi
	case "$dir" in http://* | https://*) ;; *) die "--mirror $mirror: give an http:// or https:// URL" ;; esac
	mkdir -p "$cache/dl"
	# what a killed run (kill -9, power loss) left: never used, only in the way
	find "$cache/dl" "$cache" -maxdepth 1 -name '*.part.*' -mmin +240 -exec rm -rf {} + 2>/dev/null || true
	part="$cache/dl/$name.part.$$" sums="$cache/dl/sha256sums.asc.part.$$"
	tmp_dirs+=("$part" "$part.err" "$sums" "$sums.err")
	[ -n "$sub" ] || [ -n "$upstream" ] ||
		say "the kernel's patch level is unknown (an ABI name, and not the running kernel's /proc/version_signature): taking Linux $xy itself; --upstream $xy.N picks a stable release"
	say "fetching $dir/$name (about 150 MB; only drivers/net/usb and a few files are kept)"
	if ! http_get "$dir/$name" "$part"; then
		not_found+=("$dir/$name: $http_err")
		return 1
	fi
	if http_get "$dir/sha256sums.asc" "$sums"; then
		want="$(awk -v n="$name" '$2 == n && $1 ~ /^[0-9a-f]+$/ && length($1) == 64 { print $1; exit }' "$sums")"
		if [ -z "$want" ]; then
			check="no checksum checked: $dir/sha256sums.asc lists no $name"
		else
			got="$(sha256sum "$part" | awk '{ print $1 }')"
			if [ "$got" != "$want" ]; then
				rm -f "$part"
				not_found+=("$dir/$name: its sha256 $got is not the $want of $dir/sha256sums.asc: refused and deleted (a damaged download or a wrong mirror)")
				return 1
			fi
			check="sha256 ok against $dir/sha256sums.asc (its PGP signature not checked)"
		fi
	else
		check="no checksum checked: $dir/sha256sums.asc: $http_err"
	fi
	rm -f "$sums"
	case "$check" in no\ checksum*) say "warning: $check" ;; esac
	srcname="$dir/$name, $check"
	say "extracting drivers/net/usb from $name"
	unpack "linux-$v" "$name" cat "$part" || { rm -f "$part"; not_found+=("$dir/$name: not a kernel tarball with linux-$v/drivers/net/usb"); return 1; }
	rm -f "$part"
	tv="$(family_of_tree "$src" || true).$(sublevel_of_tree "$src" || true)"
	if [ "$tv" != "$v" ] && [ "$tv" != "$v.0" ]; then
		rm -rf "$src"
		not_found+=("$dir/$name: its Makefile says Linux $tv, not $v")
		return 1
	fi
}

src="" debver_opt="$debver"
if [ -n "$ksrc" ]; then
	ksrc="$(cd "$ksrc" 2>/dev/null && pwd)" || die "--ksrc/KSRC: no such directory"
	{ [ -f "$ksrc/drivers/net/usb/usbnet.c" ] && [ -f "$ksrc/include/linux/usb/usbnet.h" ]; } ||
		die "--ksrc $ksrc is not a kernel source tree (no drivers/net/usb/usbnet.c)"
	tf="$(family_of_tree "$ksrc" || true)"
	[ "$tf" = "$xy" ] || die "--ksrc $ksrc is Linux ${tf:-?} (its Makefile), the kernel $kver is Linux $xy"
	src="$ksrc"
	srcname="the tree $ksrc (Linux $tf.$(sublevel_of_tree "$ksrc"))"
	differs "$tf.$(sublevel_of_tree "$ksrc")" "the source ($ksrc)"
else
	if [ -z "$kernel_org" ] && debian_source; then
		# shellcheck disable=SC2001 # keeps the leading X.Y.Z: a capture ${var//} cannot make
		differs "$(echo "$debver" | sed 's/^\([0-9]*\.[0-9]*\.[0-9]*\).*/\1/')" "$srcname"
	elif [ -n "$debver_opt" ] && [ -z "$kernel_org" ]; then
		die "linux-source-$xy $debver (--debver): ${not_found[*]}"
	elif kernel_org_source; then
		differs "$(family_of_tree "$src").$(sublevel_of_tree "$src")" "the source"
	else
		reasons="$(printf '; %s' "${not_found[@]}")"
		die "no source of Linux $kpl's drivers/net/usb for $kver: ${reasons#; }. What to do: on Debian or Raspberry Pi OS, apt-get install linux-source-$xy if the archive has it; otherwise give a Linux $xy tree with KSRC=DIR (--ksrc DIR); the kernel.org fetch needs network access to $mirror (WIRESPEED_KERNEL_MIRROR=URL or --mirror URL for another mirror)"
	fi
fi
say "source: $srcname"
if [ -n "$source_only" ]; then
	echo "$src"
	exit 0
fi

# 3. Patch a private copy laid out as in the kernel tree.
out="${out:-$here/out/$kver}"
mkdir -p "$out"
out="$(cd "$out" && pwd)" # kbuild's M= must be absolute
tree="$out/tree"
rm -rf "$tree" && mkdir -p "$tree/drivers/net/usb" "$tree/include/linux/usb"
cp "$src"/drivers/net/usb/*.[ch] "$tree/drivers/net/usb/"
cp "$src"/include/linux/usb/usbnet.h "$src"/include/linux/usb/cdc_ncm.h "$tree/include/linux/usb/"
series_patches=()
if [ -n "$series" ]; then
	for p in "$here/patches/$family"/*.patch; do
		case "$(basename "$p")" in 0000-cover-letter.patch) continue ;; esac
		series_patches+=("$p")
	done
	if [ -n "$upto" ]; then
		[ "$upto" -le "${#series_patches[@]}" ] ||
			die "--series-upto $upto: patches/$family has ${#series_patches[@]} patches"
		series_patches=("${series_patches[@]:0:$upto}")
	fi
fi
lab_patch() { # FILE -> FILE as given, or lab/FAMILY/NAME
	if [ -f "$1" ]; then echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
	elif [ -f "$here/lab/$family/$(basename "$1")" ]; then echo "$here/lab/$family/$(basename "$1")"
	else die "--extra-patch $1: no such file, and no lab/$family/$(basename "$1")"
	fi
}
extra_patches=()
for p in "${extra[@]+"${extra[@]}"}"; do extra_patches+=("$(lab_patch "$p")"); done
for p in "${series_patches[@]+"${series_patches[@]}"}" "${extra_patches[@]+"${extra_patches[@]}"}"; do
	patch -d "$tree" -p1 -s --batch --forward --no-backup-if-mismatch <"$p" >"$out/patch.log" 2>&1 ||
		{ cat "$out/patch.log" >&2; die "$(basename "$p") does not apply to $srcname; give --ksrc with a $family tree it applies to, or --debver another linux-source-$xy (--upstream X.Y.Z: another kernel.org release)"; }
done

# Cross builds: the build directory's configuration names its architecture.
makeargs=()
if grep -q '^CONFIG_ARM64=y' "$kdir/.config" 2>/dev/null && [ "$(uname -m)" != aarch64 ]; then
	cc="${CROSS_COMPILE:-aarch64-linux-gnu-}"
	cross_gcc arm64 aarch64-linux-gnu- "$kdir"
	makeargs=(ARCH=arm64 CROSS_COMPILE="$cc")
elif grep -q '^CONFIG_X86_64=y' "$kdir/.config" 2>/dev/null && [ "$(uname -m)" != x86_64 ]; then
	cc="${CROSS_COMPILE:-x86_64-linux-gnu-}"
	cross_gcc amd64 x86_64-linux-gnu- "$kdir"
	makeargs=(ARCH=x86_64 CROSS_COMPILE="$cc")
fi
# Native builds: the kernel's headers were made by one gcc major (their
# .config says CONFIG_GCC_VERSION); another one fails on flags it lacks
# (Debian 13's 7.x headers with Debian 12's gcc 12: -fmin-function-alignment).
if [ ${#makeargs[@]} = 0 ]; then
	want="$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$/\1/p' "$kdir/.config" 2>/dev/null | head -n 1)"
	# No plain gcc (Debian 13's dkms only Recommends it; gcc-14 alone) is
	# "missing" here, not a silent exit 127 under set -e and pipefail.
	have="$(gcc -dumpversion 2>/dev/null | cut -d. -f1)" || have=""
	if [ -n "$want" ] && [ "$want" != "$have" ]; then
		if command -v "gcc-$want" >/dev/null; then
			makeargs=(CC="gcc-$want")
		else
			die "$kver was built with gcc $want and this host's gcc is ${have:-missing}: apt-get install gcc-$want (Debian 13 and Ubuntu 26.04 have it); on a host whose release lacks it, build in a root of the kernel's own distribution (debootstrap), as the kernel's users do"
		fi
	fi
fi

modules="usbnet asix ax88179_178a cdc_ether cdc_eem cdc_ncm huawei_cdc_ncm cdc_mbim dm9601 sr9700 sr9800 smsc75xx smsc95xx gl620a net1080 plusb rndis_host cdc_subset zaurus mcs7830 int51x1 cx82310_eth kalmia qmi_wwan sierra_net lg-vl600 ch9200 aqc111"
work="$tree/drivers/net/usb"
{
	echo "# generated by build.sh: the patched usbnet.h must win over the kernel's"
	echo "NOSTDINC_FLAGS += -I\$(src)/../../../include"
	# shellcheck disable=SC2086 # $modules is a list of names, split on purpose
	echo "obj-m := $(printf '%s.o ' $modules)"
	echo "asix-y := asix_devices.o asix_common.o ax88172a.o"
} >"$work/Kbuild"

extra_note=""
[ "${#extra_patches[@]}" -gt 0 ] && extra_note=" and ${#extra_patches[@]} --extra-patch (lab): $(for p in "${extra_patches[@]}"; do basename "$p"; done | tr '\n' ' ')"
say "building $(echo "$modules" | wc -w) modules for $kver (Linux $kpl) from $srcname with ${#series_patches[@]} patches of patches/$family${extra_note% }"
make -C "$kdir" M="$work" "${makeargs[@]+"${makeargs[@]}"}" -j"$(nproc)" modules >"$out/build.log" 2>&1 ||
	{ tail -20 "$out/build.log" >&2; die "build failed (full log: $out/build.log)"; }
for m in $modules; do
	cp "$work/$m.ko" "$out/"
done
if [ -n "$lab_bus" ]; then
	udc="$tree/drivers/usb/gadget/udc"
	mkdir -p "$udc"
	cp "$src/drivers/usb/gadget/udc/dummy_hcd.c" "$udc/"
	patch -d "$tree" -p1 -s --batch --forward --no-backup-if-mismatch <"$here/lab/$family/dummy_hcd-rate-cap.patch" ||
		die "lab/$family/dummy_hcd-rate-cap.patch does not apply to $srcname"
	echo "obj-m := dummy_hcd.o" >"$udc/Kbuild"
	make -C "$kdir" M="$udc" "${makeargs[@]+"${makeargs[@]}"}" modules >>"$out/build.log" 2>&1 ||
		{ tail -20 "$out/build.log" >&2; die "dummy_hcd build failed (full log: $out/build.log)"; }
	cp "$udc/dummy_hcd.ko" "$out/"
	say "lab dummy_hcd (rate_mbit) in $out"
fi
{
	echo "$srcname"
	[ -z "$upto" ] || echo "+ patches/$family 1-$upto only (--series-upto, lab): $(basename "${series_patches[$((upto - 1))]}")"
} >"$out/SOURCE"
say "modules for $kver (Linux $kpl) from $srcname in $out"
