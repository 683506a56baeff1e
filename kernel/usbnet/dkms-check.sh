#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# dkms-check.sh [JSON] [--suite bookworm|trixie] [--root DIR]
#                      [--fresh-root] [--root-only] [--save-logs DIR]
#
# Real DKMS checks of kernel/usbnet (the wirespeed-usbnet DKMS package), in
# a clean Debian root. Run as root. --suite bookworm (the default): one 6.1
# and one 6.12 kernel in a Debian 12 root; --suite trixie: one 7.x kernel
# (trixie-backports') in a Debian 13 root, and 6.18 recorded as not
# checkable. Steps 1-5 are those of bookworm; "Debian 13" says what trixie
# does differently.
#
#  1. The root (default /var/tmp/dkms-root; it must be /var/tmp/dkms-root*):
#     mmdebstrap --variant=minbase bookworm, sources bookworm,
#     bookworm-updates and bookworm-security, with --no-install-recommends:
#     dkms make gcc-12 dwarves patch xz-utils kmod linux-source-6.1
#     linux-source-6.12 and the headers of the newest linux-headers-6.1.0-N-amd64
#     and linux-headers-6.12.N+deb12-amd64 apt knows (chosen in the root; the
#     headers' Depends bring linux-compiler-gcc-12-x86 and linux-kbuild-*).
#     No kernel image is installed: dpkg -l 'linux-image*' must be empty.
#     Debian's 6.12 headers Depend on their image (= version): a local stub
#     package, wirespeed-dkms-check-no-image, Provides exactly that. The
#     stock modules of both kernels are unpacked (dpkg-deb -x, not
#     installed) from linux-image-K into /lib/modules/K and depmod run, as
#     on a real machine: DKMS compares what it installs with them.
#     Debian 13 (default root /var/tmp/dkms-root-trixie): mmdebstrap
#     --variant=minbase trixie, sources trixie, trixie-updates,
#     trixie-security and trixie-backports: dkms make gcc-14 dwarves patch
#     xz-utils zstd kmod, the headers of the newest
#     linux-headers-7.[0-3].N+deb13-amd64 apt knows (trixie-backports';
#     7.0-7.3 are dkms.conf's tested releases) and its linux-source-7.Y (from
#     trixie-backports too; the headers bring gcc-14-for-host,
#     linux-headers-R-common and linux-kbuild-R). Debian 13's 7.x image is
#     split into linux-image-R (a metapackage), linux-binary-unsigned-R,
#     linux-base-R and linux-modules-R, merged-/usr under usr/lib/modules/R:
#     none of them may be installed (dpkg -l 'linux-image*' 'linux-binary*'
#     'linux-modules-*' 'linux-base-[0-9]*' empty); the headers Depend on
#     linux-base-R (= version), which the stub Provides; the stock modules
#     are unpacked from linux-modules-R and linux-base-R (modules.builtin,
#     modules.order). 6.18: Debian's archive carries no linux-headers-6.18.*
#     and no linux-source-6.18 (trixie-backports has only signed
#     linux-image-6.18.N+deb13-* whose linux-base-6.18.N is gone), so there is
#     nothing DKMS could build against; the root's own lists are searched
#     for 6.18 headers, source and images when it is made, and 6.18 is
#     recorded as not checkable ("n/a") with that evidence - or a FAIL once
#     apt knows 6.18 headers, so that this script is extended then. No 6.18
#     headers are made up.
#     A completed root carries ROOT/.wirespeed-dkms-root (its suite and
#     kernels) and is reused (a root of another suite is refused);
#     --fresh-root makes a new one. --root-only: stop after this.
#  2. kernel/usbnet of this working tree (without out/) is copied to
#     ROOT/usr/src/wirespeed-usbnet-VERSION (VERSION: dkms.conf's
#     PACKAGE_VERSION), replacing any earlier copy.
#  3. In the root (chroot; /proc, /dev, /sys bind-mounted, unmounted on any
#     exit): dkms add; per kernel K whose family has patches in
#     patches/FAMILY/: dkms build -k K, dkms install -k K; 28 modules under
#     /lib/modules/K/updates/dkms (when DKMS refuses some - its version check
#     against the stock modules - that is a FAIL, and dkms install --force is
#     tried for the checks that follow), modinfo -k K usbnet resolves there (depmod
#     ran), usbnet's vermagic is K, usbnet's undefined symbols carry the
#     series (napi_gro_receive: NAPI + GRO; dql_completed: BQL - for a
#     family whose series adds BQL, 6.1 and 6.12; 7.x has BQL in tree and
#     its series none, so dql_completed is in the stock usbnet too and tells
#     nothing: there the mark is the RX path - ours imports napi_gro_receive
#     or gro_receive_skb (7.x's headers make napi_gro_receive an inline over
#     it) and not netif_rx, the stock usbnet of /lib/modules/K/kernel (read
#     before dkms install, which archives it) netif_rx and neither; both
#     recorded), DKMS's
#     make.log names the source build.sh used; then dkms remove --all leaves
#     no module under updates/dkms and an empty dkms status.
#  4. No network: build.sh's cache (ROOT/var/cache/wirespeed) emptied, then
#     dkms add and dkms build -k K for the same kernels, each command in
#     unshare -n (a network namespace with only a down lo; checked), must
#     succeed from the installed linux-source and fetch nothing (no
#     "fetching" in make.log, no .deb in the cache); then dkms remove --all.
#  5. Refusal: dkms build -k 6.6.51+rpt-rpi-v8 (no headers of it: DKMS
#     checks BUILD_EXCLUSIVE_KERNEL first) must fail and print dkms.conf's
#     message naming the supported families.
#  A family whose patches/FAMILY/ has no patch yet is "pending": no DKMS
#  build for it; instead build.sh --no-series is run in the root, offline,
#  against its headers (the stock sources: toolchain, headers and source
#  package of that family work), recorded as stock_probe.
#
# WIRESPEED_TREE=DIR: the working tree whose kernel/usbnet is checked
# (default: the one this script is in).
#
# Prints one line per check ("ok ..." / "FAIL ..." / "pending ..." / "n/a ..."
# for a family not checkable), writes
# the JSON summary to JSON (default ./usbnet-dkms.json), and the logs of every
# command to ROOT-logs/ (with --save-logs DIR, DKMS's make.log of each build
# is also copied to DIR/make-KERNEL[-offline].log). Exit 0 when every check
# passed, 1 when one failed, 2 on usage errors (not root, no mmdebstrap, ...).
#
# JSON schema ("wirespeed-usbnet-dkms-check/1"):
#   {schema, date (UTC), result: ok|FAIL (|pending: no check failed, some
#    family pending), package, version, tree: {commit, dirty},
#    host_kernel, root: {path, tool (mmdebstrap VERSION), variant, suites,
#    reused, create_seconds, size_mb, dkms_version, gcc_version,
#    linux_image_packages (count, must be 0), image_stub, stock_modules
#    (the image packages unpacked), packages: {name: version}},
#    kernels: [{kernel, family, patches (count in patches/FAMILY, without the
#      cover letter), patches_applied (per make.log), result: ok|FAIL|pending,
#      source (as build.sh names it in make.log), module_count, vermagic,
#      marker: {napi_gro_receive, dql_completed, netif_rx (booleans:
#      undefined symbols of usbnet.ko)}, modinfo_filename, install:
#      {plain_module_count (what dkms install put there), refused_by_version_check,
#      mode: plain|--force}, times: {build_s, install_s, install_force_s,
#      offline_build_s}, offline: {result,
#      source, module_count, fetched (bool), cache_debs (count)},
#      stock_probe (pending families only): {result, seconds,
#      module_count, vermagic, marker}, marker_rule, gro (ours imports
#      napi_gro_receive or gro_receive_skb) and stock_marker: {file,
#      napi_gro_receive, gro, dql_completed, netif_rx} (families whose
#      series adds no BQL, 7.x, only)}],
#    not_checkable (--suite trixie only): [{family, result:
#      not-checkable|FAIL, reason, apt: {headers, source, images, lists
#      (the root's lists: suite and Date of each)}}],
#    offline_network: {interfaces (in the namespace), connect_refused},
#    removal: {result, modules_left, dkms_status},
#    refusal: {kernel, exit_code, message_names_families, result, dkms_says},
#    checks: [{result: ok|FAIL|pending|n/a, what}]}
set -uo pipefail

usage() {
	sed -n '2,3p' "$0" >&2
	echo "see the top of $0" >&2
	exit 2
}
die2() { echo "dkms-check: $*" >&2; exit 2; }
die() { echo "dkms-check: $*" >&2; exit 1; }
say() { echo "dkms-check: $*" >&2; }

json_out="./usbnet-dkms.json" root="" fresh="" root_only="" save_logs="" suite=bookworm
have_json=""
while [ $# -gt 0 ]; do
	case "$1" in
	--root) [ $# -ge 2 ] || usage; root="$2"; shift 2 ;;
	--suite) [ $# -ge 2 ] || usage; suite="$2"; shift 2 ;;
	--fresh-root) fresh=1; shift ;;
	--root-only) root_only=1; shift ;;
	--save-logs) [ $# -ge 2 ] || usage; save_logs="$2"; shift 2 ;;
	-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
	-*) echo "dkms-check: unknown option $1" >&2; usage ;;
	*) [ -z "$have_json" ] || usage; json_out="$1"; have_json=1; shift ;;
	esac
done

# The suite: the root's Debian release, and the kernels checked in it.
# kernel_keys: KEY=REGEX, the newest headers package apt knows that matches
# REGEX is installed and recorded as KEY in the root's marker file.
case "$suite" in
bookworm)
	root="${root:-/var/tmp/dkms-root}"
	suites=(bookworm bookworm-updates bookworm-security)
	sources=("deb http://deb.debian.org/debian bookworm main"
		"deb http://deb.debian.org/debian bookworm-updates main"
		"deb http://deb.debian.org/debian-security bookworm-security main")
	gcc="gcc-12"
	include=dkms,make,gcc-12,dwarves,patch,xz-utils,kmod
	kernel_keys=('k61=^linux-headers-6\.1\.0-[0-9]+-amd64$' 'k612=^linux-headers-6\.12\.[0-9]+\+deb12-amd64$')
	image_globs=('linux-image*')
	release="Debian 12" download_mb=600
	probe_families=()
	;;
trixie)
	root="${root:-/var/tmp/dkms-root-trixie}"
	suites=(trixie trixie-updates trixie-security trixie-backports)
	sources=("deb http://deb.debian.org/debian trixie main"
		"deb http://deb.debian.org/debian trixie-updates main"
		"deb http://deb.debian.org/debian-security trixie-security main"
		"deb http://deb.debian.org/debian trixie-backports main")
	gcc="gcc-14"
	include=dkms,make,gcc-14,dwarves,patch,xz-utils,zstd,kmod
	# The tested 7.x releases (dkms.conf's rule): trixie-backports' newest.
	kernel_keys=('k7x=^linux-headers-7\.[0-3]\.[0-9]+\+deb13-amd64$')
	# 7.x's image is split: linux-image-R (a metapackage), linux-binary-*-R,
	# linux-base-R, linux-modules-R. linux-base (no -R) is kernel tooling.
	image_globs=('linux-image*' 'linux-binary*' 'linux-modules-*' 'linux-base-[0-9]*')
	release="Debian 13" download_mb=750
	# Debian serves no 6.18 headers (see the header): recorded, not built.
	probe_families=(6.18)
	;;
*) die2 "--suite $suite: bookworm (6.1, 6.12) or trixie (7.x from trixie-backports)" ;;
esac

[ "$(id -u)" = 0 ] || die2 "run as root (it makes a chroot, mounts /proc, /dev, /sys into it and runs dkms there)"
command -v mmdebstrap >/dev/null ||
	die2 "mmdebstrap is missing: apt-get install --no-install-recommends mmdebstrap"
for t in chroot unshare mount umount tar; do
	command -v "$t" >/dev/null || die2 "$t is missing (apt-get install util-linux coreutils tar)"
done
case "$root" in
/var/tmp/dkms-root*) ;;
*) die2 "--root must be under /var/tmp/dkms-root* (it is removed and remade at will): $root" ;;
esac
case "$root" in *[!A-Za-z0-9/._+-]*|*/../*|*/..) die2 "--root $root: plain path characters only" ;; esac
root="${root%/}"
logs="$root-logs"

here="$(cd "$(dirname "$0")" && pwd)"
tree_dir="$(cd "${WIRESPEED_TREE:-$here/../..}" && pwd)"
pkgdir="$tree_dir/kernel/usbnet"
if [ ! -f "$pkgdir/dkms.conf" ] || [ ! -x "$pkgdir/build.sh" ]; then
	die2 "no kernel/usbnet/dkms.conf and build.sh under $tree_dir"
fi
pkgname="$(sed -n 's/^PACKAGE_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$pkgdir/dkms.conf" | head -n 1)"
version="$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$pkgdir/dkms.conf" | head -n 1)"
if [ -z "$pkgname" ] || [ -z "$version" ]; then
	die2 "no PACKAGE_NAME / PACKAGE_VERSION in $pkgdir/dkms.conf"
fi
nmods="$(grep -c '^BUILT_MODULE_NAME\[' "$pkgdir/dkms.conf")"
refuse_kver="6.6.51+rpt-rpi-v8"
marker_file="$root/.wirespeed-dkms-root"

# --- mounts: everything this script mounts is unmounted on any exit ---------
mounted=()
cleanup_mounts() {
	local i m
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m="${mounted[$i]}"
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "could not unmount $m"
	done
	mounted=()
	# Anything still mounted under the root (a run killed with -9, or
	# mmdebstrap interrupted): deepest first.
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "could not unmount $m"
	done < <(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r)
}
# shellcheck disable=SC2317 # run by the EXIT trap
on_exit() {
	local rc=$?
	cleanup_mounts
	exit "$rc"
}
trap on_exit EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM HUP

mount_root() {
	local d
	[ ${#mounted[@]} = 0 ] || return 0
	for d in proc dev sys; do
		mkdir -p "$root/$d"
		mount --bind "/$d" "$root/$d" || die "mount --bind /$d $root/$d failed"
		mounted+=("$root/$d")
		mount --make-private "$root/$d" 2>/dev/null || true
	done
}

# in_root CMD...: run CMD in the root with a clean environment.
in_root() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}
# in_root_offline CMD...: the same in a new network namespace.
in_root_offline() {
	unshare -n chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

json() { # STRING -> a JSON string
	local s="$1"
	s="${s//\\/\\\\}"; s="${s//\"/\\\"}"; s="${s//$'\n'/\\n}"; s="${s//$'\t'/\\t}"; s="${s//$'\r'/}"
	printf '"%s"' "$s"
}
jnum() { [[ "${1:-}" =~ ^-?[0-9]+(\.[0-9]+)?$ ]] && printf '%s' "$1" || printf 'null'; }
jbool() { case "${1:-}" in 1|true|yes) printf true ;; 0|false|no) printf false ;; *) printf null ;; esac; }

checks_json=() failed=0 pending=0
check() { # ok|FAIL|pending WHAT
	case "$1" in FAIL) failed=1 ;; pending) pending=1 ;; esac
	printf '%-7s %s\n' "$1" "$2"
	checks_json+=("{\"result\":$(json "$1"),\"what\":$(json "$2")}")
}
okif() { # CONDITION-EXIT WHAT: check ok when the previous test passed
	if [ "$1" = 0 ]; then check ok "$2"; else check FAIL "$2"; fi
}

mkdir -p "$logs" || die2 "cannot make $logs"
run_id="$(date -u +%Y%m%dT%H%M%SZ)"
rlogs="$logs/$run_id"
mkdir -p "$rlogs"
say "logs of this run: $rlogs"

# --- 1. the root -------------------------------------------------------------
cleanup_mounts # a previous run's leftovers, if it was killed
root_reused=true create_s=null
if [ -z "$fresh" ] && [ -f "$marker_file" ]; then
	made_for="$(sed -n 's/^suite=//p' "$marker_file")"
	[ "${made_for:-bookworm}" = "$suite" ] ||
		die2 "$root was made for --suite ${made_for:-bookworm}, not $suite: give another --root /var/tmp/dkms-root* or --fresh-root"
fi
if [ -n "$fresh" ] || [ ! -f "$marker_file" ]; then
	root_reused=false
	if [ -e "$root" ]; then
		if awk -v r="$root/" 'index($2, r) == 1 { f = 1 } END { exit !f }' /proc/mounts; then
			die "something is still mounted under $root; unmount it first"
		fi
		say "removing the incomplete or old root $root"
		rm -rf --one-file-system "$root"
	fi
	mkdir -p "$root-work"
	hook="$root-work/pick-kernels.sh"
	list="$root-work/kernels.list"
	{
		for kv in "${kernel_keys[@]}"; do echo "${kv%%=*} ${kv#*=}"; done
		for f in "${probe_families[@]}"; do echo "probe $f ${f//./\\.}"; done
	} >"$list"
	cat >"$hook" <<'EOF'
#!/bin/sh
# mmdebstrap customize hook: sh pick-kernels.sh ROOT LIST. Each line
# "KEY REGEX" of LIST: install the headers of the newest amd64 kernel apt
# knows whose headers package matches REGEX, and its X.Y's linux-source.
# Each line "probe X.Y X\.Y": record what apt knows of X.Y's headers,
# source and images (a family that is not checked, and why).
set -eu
r="$1" list="$2"
newest() { chroot "$r" apt-cache search --names-only "$1" | awk '{ print $1 }' | sort -V | tail -n 1; }
# known PACKAGE: apt has a version of it (apt-cache show exits 0, printing
# nothing, for a name that other packages only mention).
known() { chroot "$r" apt-cache show --no-all-versions "$1" 2>/dev/null | grep -q '^Version:'; }
heads="" srcs="" keys=""
while read -r key re; do
	[ "$key" != probe ] || continue
	h="$(newest "$re")"
	[ -n "$h" ] || { echo "pick-kernels: apt knows no headers matching $re" >&2; exit 1; }
	k="${h#linux-headers-}"
	heads="$heads $h"
	srcs="$srcs linux-source-$(echo "$k" | sed 's/^\([0-9]*\.[0-9]*\).*/\1/')"
	keys="$keys $key=$k"
done <"$list"
# Debian 12's 6.12 headers Depend on their kernel image (6.1's do not),
# Debian 13's 7.x headers on a part of their split image (linux-base-R;
# the others are linux-binary-unsigned-R and linux-modules-R): a stub
# package Provides exactly what the headers name, so that no image package
# is installed.
stubs=""
for h in $heads; do
	dep="$(chroot "$r" apt-cache show --no-all-versions "$h" | sed -n 's/^Depends: //p' | tr ',' '\n' |
		sed -n 's/^ *\(linux-\(image\|binary\|binary-unsigned\|base\|modules\)-[0-9][^ |]*\) (= \([^)]*\)).*/\1 (= \3)/p' |
		sed ':a;N;s/\n/, /;ba')"
	[ -z "$dep" ] || stubs="${stubs:+$stubs, }$dep"
done
if [ -n "$stubs" ]; then
	d="$r/tmp/stub"
	mkdir -p "$d/DEBIAN"
	printf '%s\n' "Package: wirespeed-dkms-check-no-image" "Version: 1" "Architecture: all" \
		"Maintainer: wirespeed <wirespeed@localhost>" "Provides: $stubs" \
		"Description: stands in for the kernel images the headers depend on" \
		" Made by kernel/usbnet/dkms-check.sh: the root builds modules, it boots nothing." >"$d/DEBIAN/control"
	chroot "$r" dpkg-deb --build /tmp/stub /tmp/stub.deb
	chroot "$r" dpkg -i /tmp/stub.deb
	rm -rf "$d" "$r/tmp/stub.deb"
fi
# shellcheck disable=SC2086 # package lists
chroot "$r" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	$heads $srcs
# The stock modules of each kernel, as a real machine has them (DKMS
# compares its modules with them), unpacked from the image packages - not
# installed: only /lib/modules/K of them, then depmod. Debian 13's 7.x:
# linux-modules-K (the modules) and linux-base-K (modules.builtin,
# modules.order, config); before, all of it is in linux-image-K.
for kv in $keys; do
	k="${kv#*=}"
	pkgs="linux-image-$k"
	! known "linux-modules-$k" || pkgs="linux-modules-$k linux-base-$k"
	rm -rf "$r/tmp/img" && mkdir -p "$r/tmp/img"
	chroot "$r" sh -c "cd /tmp/img && apt-get download -q $pkgs" >&2
	chroot "$r" sh -c 'for d in /tmp/img/*.deb; do dpkg-deb -x "$d" /tmp/img/x || exit 1; done' >&2
	m="$r/tmp/img/x/lib/modules/$k"
	[ -d "$m" ] || m="$r/tmp/img/x/usr/lib/modules/$k"
	[ -d "$m/kernel" ] || { echo "pick-kernels: no lib/modules/$k/kernel in $pkgs" >&2; exit 1; }
	mkdir -p "$r/lib/modules/$k"
	cp -a "$m/." "$r/lib/modules/$k/"
	chroot "$r" depmod "$k" >&2
	echo "stock_$k=$(chroot "$r" sh -c 'for d in /tmp/img/*.deb; do dpkg-deb -f "$d" Package Version; done' | tr '\n' ' ')"
	rm -rf "$r/tmp/img"
done >"$r/.wirespeed-dkms-stock"
# Families not checked: what apt knows of them, from the root's own lists.
while read -r key xy re; do
	[ "$key" = probe ] || continue
	hs="$(chroot "$r" apt-cache search --names-only "^linux-headers-$re\\." | awk '{ print $1 }' | sort -V | tr '\n' ' ')"
	src=""
	! known "linux-source-$xy" ||
		src="$(chroot "$r" apt-cache madison "linux-source-$xy" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | tr '\n' ' ')"
	imgs=""
	for i in $(chroot "$r" apt-cache search --names-only "^linux-image-$re\\.[0-9]+\\+[a-z0-9]+-amd64\$" | awk '{ print $1 }' | sort -V); do
		c="$(chroot "$r" apt-cache show --no-all-versions "$i")"
		v="$(echo "$c" | sed -n 's/^Version: //p' | head -n 1)"
		sp="$(echo "$c" | sed -n 's/^Source: \([^ ]*\).*/\1/p' | head -n 1)"
		b="$(echo "$c" | sed -n 's/^Depends: //p' | tr ',' '\n' | sed -n 's/^ *\(linux-base-[0-9][^ |]*\) (=.*/\1/p' | head -n 1)"
		miss=""
		[ -z "$b" ] || known "$b" || miss="; its $b is not in the archive"
		imgs="${imgs:+$imgs; }$i $v (source $sp$miss)"
	done
	echo "probe_${xy}_headers=$hs"
	echo "probe_${xy}_source=$src"
	echo "probe_${xy}_images=$imgs"
done <"$list" >"$r/.wirespeed-dkms-probes"
lists=""
for f in "$r"/var/lib/apt/lists/*_InRelease; do
	[ -f "$f" ] || continue
	lists="${lists:+$lists; }$(sed -n 's/^Codename: //p' "$f" | head -n 1) $(sed -n 's/^Date: //p' "$f" | head -n 1)"
done
chroot "$r" apt-get clean
{
	for kv in $keys; do echo "$kv"; done
	echo "stub=$stubs"
	cat "$r/.wirespeed-dkms-stock"
	cat "$r/.wirespeed-dkms-probes"
	echo "lists=$lists"
} >"$r/.wirespeed-dkms-kernels"
rm -f "$r/.wirespeed-dkms-stock" "$r/.wirespeed-dkms-probes"
EOF
	say "making the $release root $root with mmdebstrap (this downloads ~$download_mb MB)"
	t0="$(now)"
	if ! nice -n 10 mmdebstrap --mode=root --variant=minbase \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$include" \
		--customize-hook="sh $hook \"\$1\" $list" \
		"${suites[0]}" "$root" "${sources[@]}" \
		>"$rlogs/mmdebstrap.log" 2>&1; then
		tail -n 25 "$rlogs/mmdebstrap.log" >&2
		die "mmdebstrap failed (full log: $rlogs/mmdebstrap.log); rerun to retry"
	fi
	create_s="$(since "$t0")"
	[ -f "$root/.wirespeed-dkms-kernels" ] || die "the root has no .wirespeed-dkms-kernels (the customize hook failed?)"
	{
		echo "suite=$suite"
		cat "$root/.wirespeed-dkms-kernels"
		echo "made=$(date -u +%FT%TZ)"
		echo "create_seconds=$create_s"
		echo "tool=mmdebstrap $(mmdebstrap --version 2>/dev/null | awk '{ print $2 }')"
	} >"$marker_file.tmp" && mv "$marker_file.tmp" "$marker_file"
	say "root made in ${create_s}s"
else
	say "reusing the root $root (made $(sed -n 's/^made=//p' "$marker_file"); --fresh-root for a new one)"
fi
kernels=()
for kv in "${kernel_keys[@]}"; do
	kernels+=("$(sed -n "s/^${kv%%=*}=//p" "$marker_file")")
done
[ "$root_reused" = false ] || create_s="$(sed -n 's/^create_seconds=//p' "$marker_file")"
tool="$(sed -n 's/^tool=//p' "$marker_file")"
stub="$(sed -n 's/^stub=//p' "$marker_file")"
stock="$(sed -n 's/^stock_[^=]*=//p' "$marker_file" | sed 's/ *$//' | paste -sd, -)"
for k in "${kernels[@]}"; do
	[ -n "$k" ] || die "$marker_file names no kernels; rerun with --fresh-root"
done

mount_root
# shellcheck disable=SC2016 # dpkg-query's own \${...}
dpkgv() { in_root dpkg-query -W -f='${Version}' "$1" 2>/dev/null; }
# shellcheck disable=SC2016
images="$(in_root dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${image_globs[@]}" 2>/dev/null | grep -c '^ii' || true)"
[ "$images" = 0 ]; okif $? "the root has no kernel image installed (dpkg -l $(printf "'%s' " "${image_globs[@]}" | sed 's/ $//'): $images installed)"
xy_of() { [[ "$1" =~ ^([0-9]+\.[0-9]+) ]] && echo "${BASH_REMATCH[1]}"; } # KERNEL -> X.Y (its linux-source-X.Y)
srcs=()
for k in "${kernels[@]}"; do
	in_root test -f "/lib/modules/$k/build/Makefile"
	okif $? "headers of $k installed (/lib/modules/$k/build -> $(readlink "$root/lib/modules/$k/build"))"
	srcs+=("$(xy_of "$k")")
done
for f in "${srcs[@]}"; do
	[ -f "$root/usr/src/linux-source-$f.tar.xz" ]
	okif $? "linux-source-$f $(dpkgv "linux-source-$f") installed (/usr/src/linux-source-$f.tar.xz)"
done
dkms_version="$(dpkgv dkms)"
gcc_version="$(in_root "$gcc" -dumpfullversion 2>/dev/null)"
case "$suite" in
bookworm)
	k61="${kernels[0]}" k612="${kernels[1]}"
	pkgs=(dkms gcc-12 dwarves kmod patch make "linux-headers-$k61" "linux-headers-$k612"
		linux-source-6.1 linux-source-6.12 linux-compiler-gcc-12-x86 linux-kbuild-6.1
		"linux-kbuild-${k612%-amd64}") ;;
trixie)
	k7x="${kernels[0]}"
	pkgs=(dkms gcc-14 gcc-14-for-host dwarves kmod patch make zstd "linux-headers-$k7x"
		"linux-headers-${k7x%-amd64}-common" "linux-source-$(xy_of "$k7x")" "linux-kbuild-${k7x%-amd64}"
		wirespeed-dkms-check-no-image) ;;
esac
pkgs_json=""
for p in "${pkgs[@]}"; do
	pkgs_json+="${pkgs_json:+,}$(json "$p"):$(json "$(dpkgv "$p")")"
done
[ -z "$root_only" ] || { say "root ready: $root (kernels $(printf '%s, ' "${kernels[@]}" | sed 's/, $//'))"; exit "$failed"; }

# --- 2. the package ----------------------------------------------------------
dest="$root/usr/src/$pkgname-$version"
in_root dkms status 2>/dev/null | grep -q "^$pkgname/" &&
	{ say "removing $pkgname left registered by an earlier run"; in_root dkms remove "$pkgname/$version" --all >"$rlogs/pre-remove.log" 2>&1; }
rm -rf "$dest" "$root/var/lib/dkms/$pkgname"
mkdir -p "$dest"
tar -C "$pkgdir" --exclude=./out -cf - . | tar -C "$dest" -xf -
[ -f "$dest/dkms.conf" ] && [ ! -e "$dest/out" ]
okif $? "kernel/usbnet (without out/) copied to /usr/src/$pkgname-$version"
tree_commit="$(git -C "$tree_dir" rev-parse HEAD 2>/dev/null || echo unknown)"
tree_dirty=false
[ -z "$(git -C "$tree_dir" status --porcelain -- kernel/usbnet 2>/dev/null)" ] || tree_dirty=true

family_of() { case "$1" in 6.1.*) echo 6.1 ;; 6.12.*) echo 6.12 ;; 6.18.*) echo 6.18 ;; 7.*) echo 7.x ;; esac; }
# bql_in_series FAMILY: 0 when patches/FAMILY adds BQL (6.1, 6.12, 6.18);
# 7.x's stock usbnet has BQL in tree (since 6.19) and its series none.
bql_in_series() { compgen -G "$pkgdir/patches/$1/*-add-byte-queue-limits.patch" >/dev/null; }
# stock_usbnet KERNEL: the stock usbnet.ko* unpacked into the root (root path).
stock_usbnet() {
	local m
	m="$(find "$root/lib/modules/$1/kernel/drivers/net/usb" -maxdepth 1 -name 'usbnet.ko*' -type f 2>/dev/null | head -n 1)"
	echo "${m#"$root"}"
}
npatches() { # FAMILY -> patches build.sh applies
	local n=0 p
	for p in "$pkgdir/patches/$1"/*.patch; do
		[ -f "$p" ] || continue
		case "$(basename "$p")" in 0000-cover-letter.patch) continue ;; esac
		n=$((n + 1))
	done
	echo "$n"
}
modlog() { echo "$root/var/lib/dkms/$pkgname/$version/$1/x86_64/log/make.log"; }
count_ko() { # DIR -> number of .ko / .ko.xz / .ko.zst / .ko.gz files
	find "$1" -maxdepth 1 -type f \( -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz' \) 2>/dev/null | wc -l
}
undef_syms() { # ROOT-PATH of a module -> its undefined symbols
	case "$1" in
	*.xz) in_root sh -c "xz -dc '$1' >/tmp/wirespeed-mod.ko && nm -u /tmp/wirespeed-mod.ko; rm -f /tmp/wirespeed-mod.ko" ;;
	*.zst) in_root sh -c "zstd -qdc '$1' >/tmp/wirespeed-mod.ko && nm -u /tmp/wirespeed-mod.ko; rm -f /tmp/wirespeed-mod.ko" ;;
	*.gz) in_root sh -c "gzip -dc '$1' >/tmp/wirespeed-mod.ko && nm -u /tmp/wirespeed-mod.ko; rm -f /tmp/wirespeed-mod.ko" ;;
	*) in_root nm -u "$1" ;;
	esac 2>/dev/null | awk '{ print $NF }'
}
has_sym() { grep -qx "$2" <<<"$1" && echo true || echo false; }
source_of_log() { # make.log -> the source build.sh says it built from
	sed -n 's/^wirespeed-usbnet: building [0-9]* modules for .* from \(.*\) with [0-9]* patches of patches\/.*$/\1/p' "$1" 2>/dev/null | tail -n 1
}

declare -A plain refused mode t_force applied
declare -A fam res src cnt vmagic m_napi m_dql m_netif m_gro modfile s_napi s_dql s_netif s_gro s_file t_build t_install t_off off_res off_src off_cnt off_fetched off_debs probe
active=()
for k in "${kernels[@]}"; do
	fam[$k]="$(family_of "$k")"
	if [ "$(npatches "${fam[$k]}")" -gt 0 ]; then
		active+=("$k"); res[$k]=ok
	else
		res[$k]=pending
	fi
done

# Families this suite cannot check: what apt knew of them when the root was
# made (its own lists), and why.
nc_json=""
for f in "${probe_families[@]}"; do
	hs="$(sed -n "s/^probe_${f}_headers=//p" "$marker_file" | sed 's/ *$//')"
	sv="$(sed -n "s/^probe_${f}_source=//p" "$marker_file" | sed 's/ *$//')"
	im="$(sed -n "s/^probe_${f}_images=//p" "$marker_file")"
	lists="$(sed -n 's/^lists=//p' "$marker_file")"
	if [ -z "$hs" ]; then
		r="Debian's archive serves no linux-headers-$f.* for amd64 (${suites[*]}; lists of $lists), and DKMS builds only against the headers of the kernel it builds for; linux-source-$f: ${sv:-none}."
		[ -z "$im" ] || r+=" apt knows only signed images: $im."
		r+=" No $f headers are made up here: the $f series is checked against whole kernel.org trees with kernel/usbnet/check-tree.sh instead"
		check n/a "$f: not checkable in a $release root: $r"
		nr="not-checkable"
	else
		r="apt now knows $hs: this script still records $f as not checkable; check it like the other kernels"
		check FAIL "$f: $r"
		nr=FAIL
	fi
	nc_json+="${nc_json:+,}{\"family\":$(json "$f"),\"result\":$(json "$nr"),\"reason\":$(json "$r"),\"apt\":{\"headers\":$(json "$hs"),\"source\":$(json "$sv"),\"images\":$(json "$im"),\"lists\":$(json "$lists")}}"
done

# --- 3. add, build, install, check, remove ----------------------------------
# A family whose series adds no BQL (7.x): the stock usbnet's symbols, read
# now - dkms install (3.2) archives the stock modules it replaces.
for k in "${active[@]}"; do
	! bql_in_series "${fam[$k]}" || continue
	s_file[$k]="$(stock_usbnet "$k")"
	syms="$(undef_syms "${s_file[$k]:-/nonexistent}")"
	[ -n "$syms" ] || continue
	s_napi[$k]="$(has_sym "$syms" napi_gro_receive)"
	s_gro[$k]=false
	[ "${s_napi[$k]}" = false ] && [ "$(has_sym "$syms" gro_receive_skb)" = false ] || s_gro[$k]=true
	s_dql[$k]="$(has_sym "$syms" dql_completed)"
	s_netif[$k]="$(has_sym "$syms" netif_rx)"
done
in_root dkms add "$pkgname/$version" >"$rlogs/add.log" 2>&1
okif $? "dkms add $pkgname/$version"
for k in "${active[@]}"; do
	f="${fam[$k]}"
	t0="$(now)"
	in_root nice -n 10 dkms build "$pkgname/$version" -k "$k" >"$rlogs/build-$k.log" 2>&1
	rc=$?
	t_build[$k]="$(since "$t0")"
	[ -z "$save_logs" ] || { mkdir -p "$save_logs" && cp "$(modlog "$k")" "$save_logs/make-$k.log" 2>/dev/null; }
	# DKMS 3.2 keeps a failed build's make.log in build/, not under K/.
	cp "$(modlog "$k")" "$rlogs/make-$k.log" 2>/dev/null ||
		cp "$root/var/lib/dkms/$pkgname/$version/build/make.log" "$rlogs/make-$k.log" 2>/dev/null
	if [ $rc != 0 ]; then
		res[$k]=FAIL
		check FAIL "dkms build -k $k (exit $rc after ${t_build[$k]}s; $rlogs/build-$k.log)"
		tail -n 15 "$rlogs/build-$k.log" >&2
		continue
	fi
	src[$k]="$(source_of_log "$(modlog "$k")")"
	applied[$k]="$(sed -n 's/^wirespeed-usbnet: building .* with \([0-9]*\) patches of patches\/.*$/\1/p' "$(modlog "$k")" | tail -n 1)"
	check ok "dkms build -k $k (${t_build[$k]}s, ${applied[$k]:-?} patches of patches/$f applied, per make.log)"
	[ -n "${src[$k]}" ]
	okif $? "make.log of $k names its source: ${src[$k]:-none}"
	d="$root/lib/modules/$k/updates/dkms"
	t0="$(now)"
	in_root dkms install "$pkgname/$version" -k "$k" >"$rlogs/install-$k.log" 2>&1
	rc=$?
	t_install[$k]="$(since "$t0")"
	plain[$k]="$(count_ko "$d")"
	refused[$k]="$(grep -c 'DKMS will not replace this module' "$rlogs/install-$k.log")"
	mode[$k]=plain
	[ $rc = 0 ] && [ "${plain[$k]}" = "$nmods" ] && [ -f "$root/usr/share/dkms/modules_to_force_install/$pkgname" ]
	okif $? "dkms install -k $k (dkms.conf's POST_ADD put $pkgname in modules_to_force_install): $nmods modules under /lib/modules/$k/updates/dkms (exit $rc, ${t_install[$k]}s; ${plain[$k]} installed, ${refused[$k]} refused by DKMS's version check against the stock modules)"
	if [ "${plain[$k]}" != "$nmods" ]; then
		# What a user can do today: --force skips that check.
		res[$k]=FAIL
		in_root dkms uninstall "$pkgname/$version" -k "$k" >>"$rlogs/install-$k.log" 2>&1
		t0="$(now)"
		in_root dkms install --force "$pkgname/$version" -k "$k" >"$rlogs/install-force-$k.log" 2>&1
		rc=$?
		t_force[$k]="$(since "$t0")"
		mode[$k]=--force
	fi
	cnt[$k]="$(count_ko "$d")"
	if [ "${mode[$k]}" = --force ]; then
		[ $rc = 0 ] && [ "${cnt[$k]}" = "$nmods" ]
		okif $? "dkms install --force -k $k (the stock modules ignored): ${cnt[$k]} modules under updates/dkms (exit $rc, ${t_force[$k]}s)"
	fi
	[ "${cnt[$k]}" = "$nmods" ] || { check FAIL "no modules of ours under /lib/modules/$k/updates/dkms: the other checks of $k skipped"; continue; }
	usb="$(find "$d" -maxdepth 1 -name 'usbnet.ko*' -type f | head -n 1)"
	usb="${usb#"$root"}"
	modfile[$k]="$(in_root modinfo -k "$k" -F filename usbnet 2>/dev/null)"
	[ -n "$usb" ] && [ "${modfile[$k]}" = "$usb" ] || res[$k]=FAIL
	[ -n "$usb" ] && [ "${modfile[$k]}" = "$usb" ]
	okif $? "modinfo -k $k usbnet resolves to ours (${modfile[$k]:-nothing}: depmod ran)"
	vmagic[$k]="$(in_root modinfo -F vermagic "${usb:-/nonexistent}" 2>/dev/null)"
	[ "${vmagic[$k]%% *}" = "$k" ] || res[$k]=FAIL
	[ "${vmagic[$k]%% *}" = "$k" ]
	okif $? "usbnet vermagic is $k (${vmagic[$k]:-none})"
	syms="$(undef_syms "${usb:-/nonexistent}")"
	m_napi[$k]="$(has_sym "$syms" napi_gro_receive)"
	m_dql[$k]="$(has_sym "$syms" dql_completed)"
	m_netif[$k]="$(has_sym "$syms" netif_rx)"
	if bql_in_series "$f"; then
		[ "${m_napi[$k]}" = true ] && [ "${m_dql[$k]}" = true ] || res[$k]=FAIL
		[ "${m_napi[$k]}" = true ] && [ "${m_dql[$k]}" = true ]
		okif $? "usbnet of $k carries the series (undefined symbols: napi_gro_receive ${m_napi[$k]}, dql_completed ${m_dql[$k]}, netif_rx ${m_netif[$k]})"
		continue
	fi
	# BQL is in the stock usbnet too: dql_completed tells nothing here.
	# The series' mark is its RX path: GRO (7.x's netdevice.h makes
	# napi_gro_receive an inline over gro_receive_skb) instead of stock's
	# netif_rx. The
	# stock module's symbols were read before dkms install archived it.
	m_gro[$k]=false
	[ "${m_napi[$k]}" = false ] && [ "$(has_sym "$syms" gro_receive_skb)" = false ] || m_gro[$k]=true
	{ [ "${m_gro[$k]}" = true ] && [ "${m_netif[$k]}" = false ] && [ "${s_gro[$k]:-}" = false ] && [ "${s_netif[$k]:-}" = true ]; } || res[$k]=FAIL
	[ "${m_gro[$k]}" = true ] && [ "${m_netif[$k]}" = false ] && [ "${s_gro[$k]:-}" = false ] && [ "${s_netif[$k]:-}" = true ]
	okif $? "usbnet of $k carries the series: RX through GRO, not netif_rx as the stock one (undefined symbols, ours / stock ${s_file[$k]:-missing}: napi_gro_receive or gro_receive_skb ${m_gro[$k]} / ${s_gro[$k]:-?}, netif_rx ${m_netif[$k]} / ${s_netif[$k]:-?}; dql_completed ${m_dql[$k]} / ${s_dql[$k]:-?}: BQL is in tree in $f, not a mark)"
done
in_root dkms remove "$pkgname/$version" --all >"$rlogs/remove.log" 2>&1
rc=$?
okif $rc "dkms remove $pkgname/$version --all"
left=0
for k in "${kernels[@]}"; do
	left=$((left + $(count_ko "$root/lib/modules/$k/updates/dkms")))
done
status="$(in_root dkms status 2>/dev/null)"
[ "$left" = 0 ]; okif $? "no module left under updates/dkms ($left)"
[ -z "$status" ]; okif $? "dkms status is empty after remove${status:+: $status}"
forced=0; [ ! -e "$root/usr/share/dkms/modules_to_force_install/$pkgname" ] || forced=1
[ "$forced" = 0 ]; okif $? "dkms.conf's POST_REMOVE took $pkgname out of modules_to_force_install"
removal_res=ok
{ [ $rc = 0 ] && [ "$left" = 0 ] && [ -z "$status" ] && [ "$forced" = 0 ]; } || removal_res=FAIL

# --- 4. no network -----------------------------------------------------------
cache="$root/var/cache/wirespeed"
rm -rf "$cache"
ifaces="$(in_root_offline sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " "')"
ifaces="${ifaces% }"
in_root_offline sh -c 'exec 3<>/dev/tcp/deb.debian.org/80' >/dev/null 2>&1 </dev/null
offline_rc=$?
[ "$ifaces" = lo ] && [ $offline_rc != 0 ]
okif $? "unshare -n: only '$ifaces' in the namespace, deb.debian.org:80 unreachable"
if [ ${#active[@]} -gt 0 ]; then
	in_root_offline dkms add "$pkgname/$version" >"$rlogs/offline-add.log" 2>&1
	okif $? "offline: dkms add $pkgname/$version"
fi
for k in "${active[@]}"; do
	t0="$(now)"
	in_root_offline nice -n 10 dkms build "$pkgname/$version" -k "$k" >"$rlogs/offline-build-$k.log" 2>&1
	rc=$?
	t_off[$k]="$(since "$t0")"
	ml="$(modlog "$k")"
	cp "$ml" "$rlogs/make-$k-offline.log" 2>/dev/null
	[ -z "$save_logs" ] || cp "$ml" "$save_logs/make-$k-offline.log" 2>/dev/null
	off_src[$k]="$(source_of_log "$ml")"
	off_cnt[$k]="$(count_ko "$root/var/lib/dkms/$pkgname/$version/$k/x86_64/module")"
	off_debs[$k]="$(find "$cache" -name '*.deb' 2>/dev/null | wc -l)"
	off_fetched[$k]=false
	grep -q 'wirespeed-usbnet: fetching' "$ml" 2>/dev/null && off_fetched[$k]=true
	[ "${off_debs[$k]}" = 0 ] || off_fetched[$k]=true
	off_res[$k]=ok
	{ [ $rc = 0 ] && [ "${off_cnt[$k]}" = "$nmods" ] && [ "${off_fetched[$k]}" = false ] &&
		[[ "${off_src[$k]}" == *"(installed)" ]]; } || { off_res[$k]=FAIL; res[$k]=FAIL; }
	[ "${off_res[$k]}" = ok ]
	okif $? "offline: dkms build -k $k (exit $rc, ${t_off[$k]}s, ${off_cnt[$k]} modules, from ${off_src[$k]:-?}, fetched ${off_fetched[$k]}, ${off_debs[$k]} .deb in the cache)"
done
if [ ${#active[@]} -gt 0 ]; then
	in_root dkms remove "$pkgname/$version" --all >"$rlogs/offline-remove.log" 2>&1
	okif $? "offline: dkms remove --all"
fi

# Pending families: the stock sources through build.sh, offline, against the
# same headers (no DKMS: build.sh would refuse an empty series).
for k in "${kernels[@]}"; do
	[ "${res[$k]}" = pending ] || continue
	f="${fam[$k]}"
	check pending "$k: patches/$f has no patches yet - no DKMS build for the $f family"
	o="/tmp/wirespeed-stock-$k"
	rm -rf "${root:?}$o"
	t0="$(now)"
	in_root_offline nice -n 10 "/usr/src/$pkgname-$version/build.sh" --kver "$k" --kdir "/lib/modules/$k/build" \
		--no-series --out "$o" >"$rlogs/stock-probe-$k.log" 2>&1
	rc=$?
	s="$(since "$t0")"
	c="$(count_ko "$root$o")"
	v="$(in_root modinfo -F vermagic "$o/usbnet.ko" 2>/dev/null)"
	syms="$(undef_syms "$o/usbnet.ko")"
	ps="$(sed -n 's/^wirespeed-usbnet: building [0-9]* modules for .* from \(.*\) with [0-9]* patches.*$/\1/p' "$rlogs/stock-probe-$k.log" | tail -n 1)"
	pr=ok
	{ [ $rc = 0 ] && [ "$c" = "$nmods" ] && [ "${v%% *}" = "$k" ] && [ "$(has_sym "$syms" netif_rx)" = true ]; } || pr=FAIL
	probe[$k]="{\"result\":$(json "$pr"),\"seconds\":$(jnum "$s"),\"module_count\":$(jnum "$c"),\"source\":$(json "$ps"),\"vermagic\":$(json "$v"),\"marker\":{\"napi_gro_receive\":$(has_sym "$syms" napi_gro_receive),\"dql_completed\":$(has_sym "$syms" dql_completed),\"netif_rx\":$(has_sym "$syms" netif_rx)}}"
	[ $pr = ok ]
	okif $? "stock probe for $k (build.sh --no-series, offline): exit $rc, ${s}s, $c modules, vermagic ${v%% *}, from ${ps:-?}"
	rm -rf "${root:?}$o"
done
rm -rf "$cache"

# --- 5. refusal --------------------------------------------------------------
in_root dkms add "$pkgname/$version" >"$rlogs/refusal-add.log" 2>&1
# No headers of it, and none are needed: DKMS 3.0.10 checks
# BUILD_EXCLUSIVE_KERNEL before it looks for /lib/modules/K/build.
rm -rf "${root:?}/lib/modules/$refuse_kver"
in_root dkms build "$pkgname/$version" -k "$refuse_kver" >"$rlogs/refusal.log" 2>&1
refuse_rc=$?
names=false
grep -q 'they are made for the Linux 6.1, 6.12 and 6.18 families and the 7.x family' "$rlogs/refusal.log" && names=true
refusal_res=ok
{ [ $refuse_rc != 0 ] && [ $names = true ]; } || refusal_res=FAIL
[ $refusal_res = ok ]
okif $? "dkms build -k $refuse_kver refused (exit $refuse_rc), dkms.conf's message names the supported families: $names"
in_root dkms remove "$pkgname/$version" --all >>"$rlogs/refusal-add.log" 2>&1
rm -rf "$dest"
[ -z "$(in_root dkms status 2>/dev/null)" ] && [ ! -e "$root/var/lib/dkms/$pkgname" ]
okif $? "the root is left without $pkgname (dkms status empty, /usr/src copy removed)"

cleanup_mounts
size_mb="$(du -sxm "$root" | awk '{ print $1 }')"

# --- 6. the summary ----------------------------------------------------------
result=ok
[ $pending = 0 ] || result=pending
[ $failed = 0 ] || result=FAIL
kj=""
for k in "${kernels[@]}"; do
	e="{\"kernel\":$(json "$k"),\"family\":$(json "${fam[$k]}"),\"patches\":$(npatches "${fam[$k]}"),\"patches_applied\":$(jnum "${applied[$k]:-}"),\"result\":$(json "${res[$k]}")"
	if [ "${res[$k]}" = pending ]; then
		e+=",\"stock_probe\":${probe[$k]:-null}}"
	else
		e+=",\"source\":$(json "${src[$k]:-}"),\"module_count\":$(jnum "${cnt[$k]:-}"),\"vermagic\":$(json "${vmagic[$k]:-}")"
		e+=",\"marker\":{\"napi_gro_receive\":$(jbool "${m_napi[$k]:-}"),\"dql_completed\":$(jbool "${m_dql[$k]:-}"),\"netif_rx\":$(jbool "${m_netif[$k]:-}")}"
		bql_in_series "${fam[$k]}" ||
			e+=",\"marker_rule\":\"ours: napi_gro_receive or gro_receive_skb (napi_gro_receive is an inline over it in 7.x's headers), no netif_rx; stock: netif_rx, neither GRO symbol (BQL in tree: dql_completed in both, not a mark)\",\"gro\":$(jbool "${m_gro[$k]:-}"),\"stock_marker\":{\"file\":$(json "${s_file[$k]:-}"),\"napi_gro_receive\":$(jbool "${s_napi[$k]:-}"),\"gro\":$(jbool "${s_gro[$k]:-}"),\"dql_completed\":$(jbool "${s_dql[$k]:-}"),\"netif_rx\":$(jbool "${s_netif[$k]:-}")}"
		e+=",\"modinfo_filename\":$(json "${modfile[$k]:-}")"
		e+=",\"install\":{\"plain_module_count\":$(jnum "${plain[$k]:-}"),\"refused_by_version_check\":$(jnum "${refused[$k]:-}"),\"mode\":$(json "${mode[$k]:-}")}"
		e+=",\"times\":{\"build_s\":$(jnum "${t_build[$k]:-}"),\"install_s\":$(jnum "${t_install[$k]:-}"),\"install_force_s\":$(jnum "${t_force[$k]:-}"),\"offline_build_s\":$(jnum "${t_off[$k]:-}")}"
		e+=",\"offline\":{\"result\":$(json "${off_res[$k]:-}"),\"source\":$(json "${off_src[$k]:-}"),\"module_count\":$(jnum "${off_cnt[$k]:-}"),\"fetched\":$(jbool "${off_fetched[$k]:-}"),\"cache_debs\":$(jnum "${off_debs[$k]:-}")}}"
	fi
	kj+="${kj:+,}$e"
done
cj="$(IFS=,; echo "${checks_json[*]}")"
nc_line=""
[ -z "$nc_json" ] || nc_line=$'\n "not_checkable": ['"$nc_json"'],'
out_dir="$(dirname "$json_out")"
mkdir -p "$out_dir" || die "cannot make $out_dir"
cat >"$json_out" <<EOF
{
 "schema": "wirespeed-usbnet-dkms-check/1",
 "date": $(json "$(date -u +%FT%TZ)"),
 "result": $(json "$result"),
 "package": $(json "$pkgname"),
 "version": $(json "$version"),
 "tree": {"commit": $(json "$tree_commit"), "dirty": $tree_dirty},
 "host_kernel": $(json "$(uname -r)"),
 "root": {"path": $(json "$root"), "tool": $(json "$tool"), "variant": "minbase", "suites": [$(printf '"%s", ' "${suites[@]}" | sed 's/, $//')], "reused": $root_reused, "create_seconds": $(jnum "$create_s"), "size_mb": $(jnum "$size_mb"), "dkms_version": $(json "$dkms_version"), "gcc_version": $(json "$gcc_version"), "linux_image_packages": $(jnum "$images"), "image_stub": $(json "$stub"), "stock_modules": $(json "$stock"), "packages": {$pkgs_json}},
 "kernels": [$kj],$nc_line
 "offline_network": {"interfaces": $(json "$ifaces"), "connect_refused": $([ $offline_rc != 0 ] && echo true || echo false)},
 "removal": {"result": $(json "$removal_res"), "modules_left": $left, "dkms_status": $(json "$status")},
 "refusal": {"kernel": $(json "$refuse_kver"), "exit_code": $refuse_rc, "message_names_families": $names, "result": $(json "$refusal_res"), "dkms_says": $(json "$(grep '^Error!' "$rlogs/refusal.log" | head -n 1)")},
 "checks": [$cj]
}
EOF
say "summary: $json_out (result $result; root $root, ${size_mb} MB; logs $rlogs)"
exit "$failed"
