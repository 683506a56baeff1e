#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# deb-test.sh - make deb-test (root): the packages of make deb, tried on a
# fresh Debian 12, not on this machine.
#
#  1. mmdebstrap makes a minbase bookworm root from Debian's archive
#     (bookworm, -updates, -security) with the test's own tools (man-db,
#     bash-completion, systemd for systemd-analyze). Sizes measured there,
#     before anything else is installed (apt-get install --assume-no prints
#     "Need to get" and "additional disk space"): each package of ours,
#     and make setup's and setup-test's lists (SETUP_PKGS, TEST_PKGS).
#  2. The kernels the DKMS package builds for: headers of the newest
#     6.1.0-N and 6.12.N+deb12 of this architecture, linux-source-6.1 and
#     -6.12 (no kernel image: a stub package stands in for the image
#     Debian's 6.12 headers depend on, as kernel/usbnet/dkms-check.sh
#     does), and the packages' dependencies. Then the list of every file:
#     the baseline.
#  3. apt install ./wirespeed_*.deb ./wirespeed-usbnet-dkms_*.deb, then in
#     the root (chroot; /proc bind-mounted, /sys bind-mounted read-only):
#     wirespeed --version, inspect --json (this machine's live devices,
#     read through the read-only /sys), doctor --from a fixture, man
#     wirespeed renders without warnings, the completion loads, the unit
#     verifies and is not enabled, DKMS built and installed the modules for
#     both kernels, and postinst said the running kernel is not one it
#     builds for (when it is not), or that its headers are missing.
#  4. apt remove: no module, no binary left; apt purge: the file list equals
#     the baseline (dpkg's and apt's own state, logs and caches aside).
# Mounts and the root are removed on any exit, Ctrl-C included. Exit 0
# when every check passed. DEB_TEST_KEEP=1 keeps the root for a look.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
say() { echo "deb-test: $*" >&2; }
die() { say "$*"; exit 2; }

[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap, chroot, mounts)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: apt-get install --no-install-recommends mmdebstrap"
arch="$(dpkg --print-architecture)"
shopt -s nullglob
tool=(dist/wirespeed_*_"$arch".deb)
dkmsdeb=(dist/wirespeed-usbnet-dkms_*_all.deb)
{ [ ${#tool[@]} = 1 ] && [ ${#dkmsdeb[@]} = 1 ]; } ||
	die "want one dist/wirespeed_*_$arch.deb and one dist/wirespeed-usbnet-dkms_*_all.deb (make deb): found ${#tool[@]} and ${#dkmsdeb[@]}"
fixtures=(testdata/snapshots/*.tar.gz)
fixture="${fixtures[0]:-}"
[ -n "$fixture" ] || die "no testdata/snapshots/*.tar.gz fixture for doctor --from"
SETUP_PKGS="${SETUP_PKGS:-}" TEST_PKGS="${TEST_PKGS:-}"

root="/var/tmp/wirespeed-deb-test.$$"
logs="${DEB_TEST_LOGS:-/var/tmp/wirespeed-deb-test-logs}"
mkdir -p "$logs"
# One run at a time per log directory: two would write each other's logs.
exec 9>"$logs/.lock"
flock -n 9 || die "another deb-test is running with the logs in $logs (set DEB_TEST_LOGS=DIR for a second one)"
summary="$logs/summary.txt"
: >"$summary"
: >"$logs/sizes.log"
: >"$logs/depmod.log"

# shellcheck disable=SC2317 # run by cleanup, the EXIT trap's (shellcheck 0.9 sees no caller)
unmount_all() {
	local m
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "could not unmount $m"
	done < <(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r)
}
# shellcheck disable=SC2317 # run by the EXIT trap below (shellcheck 0.9 sees no caller)
cleanup() {
	local rc=$?
	unmount_all
	if [ "${DEB_TEST_KEEP:-0}" = 1 ]; then
		say "root kept: $root"
	elif [ -d "$root" ]; then
		rm -rf --one-file-system "$root"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say terminated; exit 143' TERM HUP

in_root() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}
failed=0
check() { # RESULT WHAT
	[ "$1" = ok ] || failed=1
	printf '%-5s %s\n' "$1" "$2" | tee -a "$summary"
}
okif() { if [ "$1" = 0 ]; then check ok "$2"; else check FAIL "$2"; fi; }
note() { echo "$*" | tee -a "$summary"; }

# --- 1. the root, and the sizes measured in it -------------------------------
say "making a Debian 12 root with mmdebstrap in $root (logs: $logs)"
t0=$SECONDS
nice -n 10 mmdebstrap --mode=root --variant=minbase --aptopt='APT::Install-Recommends "false"' \
	--include=man-db,bash-completion,systemd \
	bookworm "$root" \
	"deb http://deb.debian.org/debian bookworm main" \
	"deb http://deb.debian.org/debian bookworm-updates main" \
	"deb http://deb.debian.org/debian-security bookworm-security main" \
	>"$logs/mmdebstrap.log" 2>&1 || { tail -n 20 "$logs/mmdebstrap.log" >&2; die "mmdebstrap failed ($logs/mmdebstrap.log)"; }
# apt's default again for what the test installs: a user's apt install
# takes Recommends.
rm -f "$root/etc/apt/apt.conf.d/99mmdebstrap"
note "root: mmdebstrap minbase bookworm ($arch) in $((SECONDS - t0))s"
mount --bind /proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /sys "$root/sys" && mount -o remount,bind,ro "$root/sys"
mkdir -p "$root/tmp/debs"
cp "${tool[0]}" "${dkmsdeb[0]}" "$root/tmp/debs/"
cp "$fixture" "$root/tmp/fixture.tar.gz"
t="/tmp/debs/$(basename "${tool[0]}")"
d="/tmp/debs/$(basename "${dkmsdeb[0]}")"

# size LABEL APT-ARGS...: what installing them would fetch and add, on this
# root. --print-uris makes apt-get print its plan and sizes and stop, at any
# quiet level. (Not --assume-no: at quiet level 2 apt-get asks nothing, so
# "no" is never answered and it installs.) One line per measurement in the
# summary; apt's full answer in sizes.log.
size() {
	local label="$1" o n get after
	shift
	o="$(in_root apt-get install --print-uris "$@" 2>&1)"
	printf '== %s\n%s\n\n' "$label" "$o" >>"$logs/sizes.log"
	n="$(printf '%s\n' "$o" | sed -n 's/^[0-9]* upgraded, \([0-9]*\) newly installed.*/\1/p')"
	get="$(printf '%s\n' "$o" | sed -n 's/^Need to get \(.*\) of archives\.$/\1/p')"
	after="$(printf '%s\n' "$o" | sed -n 's/^After this operation, \(.*\) of additional disk space will be used\.$/\1/p')"
	if [ -z "$n" ] || [ -z "$get" ] || [ -z "$after" ]; then
		check FAIL "size: $label: apt-get did not say what it would install ($logs/sizes.log)"
		return
	fi
	note "size: $label: $n new packages, download $get, on disk $after"
	# What they pull in, by name, when the list is short enough to read.
	[ "$n" -gt 45 ] || note "  new: $(printf '%s\n' "$o" | awk '/^The following NEW packages will be installed:/ { f = 1; next } f && /^  / { printf "%s", $0; next } { f = 0 }' | xargs)"
}
in_root apt-get update -q >"$logs/apt-update.log" 2>&1 || die "apt-get update failed in the root ($logs/apt-update.log)"
size "apt install ./$(basename "$t")" "$t"
size "apt install ./$(basename "$d") (Recommends on, apt's default)" "$d"
size "apt install --no-install-recommends ./$(basename "$d")" --no-install-recommends "$d"
# shellcheck disable=SC2086
[ -z "$SETUP_PKGS" ] || size "make setup: apt install --no-install-recommends SETUP_PKGS ($SETUP_PKGS)" --no-install-recommends $SETUP_PKGS
# shellcheck disable=SC2086
[ -z "$TEST_PKGS" ] || size "make setup + setup-test: apt install --no-install-recommends SETUP_PKGS TEST_PKGS (+ $TEST_PKGS)" --no-install-recommends $SETUP_PKGS $TEST_PKGS
# Measuring installs nothing: the install below starts from none of ours.
# shellcheck disable=SC2016 # ${db:Status-Status} is dpkg-query's format, not the shell's
installed() { in_root dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | grep -qx installed; }
! installed wirespeed && ! installed wirespeed-usbnet-dkms
okif $? "the sizes step installed none of our packages"
note "package files: $(du -k "${tool[0]}" | cut -f1) KiB $(basename "${tool[0]}") (Installed-Size $(dpkg-deb -f "${tool[0]}" Installed-Size) KiB), $(du -k "${dkmsdeb[0]}" | cut -f1) KiB $(basename "${dkmsdeb[0]}") (Installed-Size $(dpkg-deb -f "${dkmsdeb[0]}" Installed-Size) KiB)"

# --- 2. kernels, dependencies, baseline --------------------------------------
newest() { in_root apt-cache search --names-only "$1" | awk '{ print $1 }' | sort -V | tail -n 1; }
h61="$(newest "^linux-headers-6\\.1\\.0-[0-9]+-$arch\$")"
h612="$(newest "^linux-headers-6\\.12\\.[0-9]+\\+deb12-$arch\$")"
{ [ -n "$h61" ] && [ -n "$h612" ]; } || die "apt knows no 6.1 or 6.12 headers for $arch"
k61="${h61#linux-headers-}" k612="${h612#linux-headers-}"
note "kernels: $k61 and $k612 (headers only; no image)"
stubs=""
for h in "$h61" "$h612"; do
	dep="$(in_root apt-cache show --no-all-versions "$h" | sed -n 's/^Depends: //p' | tr ',' '\n' |
		sed -n 's/^ *\(linux-image-[^ |]*\) (= \([^)]*\)).*/\1 (= \2)/p' | head -n 1)"
	[ -z "$dep" ] || stubs="${stubs:+$stubs, }$dep"
done
if [ -n "$stubs" ]; then
	mkdir -p "$root/tmp/stub/DEBIAN"
	printf '%s\n' "Package: wirespeed-deb-test-no-image" "Version: 1" "Architecture: all" \
		"Maintainer: wirespeed <wirespeed@example.org>" "Provides: $stubs" \
		"Description: stands in for the kernel images the headers depend on" \
		" Made by scripts/deb-test.sh: the root builds modules, it boots nothing." >"$root/tmp/stub/DEBIAN/control"
	{ in_root dpkg-deb --build /tmp/stub /tmp/stub.deb >/dev/null && in_root dpkg -i /tmp/stub.deb >"$logs/stub.log" 2>&1; } ||
		die "the image stub did not install ($logs/stub.log)"
fi
# Debian packages build.sh already fetched on this machine save the download.
for f in /var/cache/wirespeed/usbnet/linux-*.deb; do
	[ "$(dpkg-deb -f "$f" Architecture)" = "$arch" ] || [ "$(dpkg-deb -f "$f" Architecture)" = all ] || continue
	cp "$f" "$root/var/cache/apt/archives/"
done
deps="$(dpkg-deb -f "${tool[0]}" Depends), $(dpkg-deb -f "${dkmsdeb[0]}" Depends)"
deps="$(printf '%s' "$deps" | tr ',' '\n' | sed 's/(.*//; s/ //g' | grep . | sort -u | tr '\n' ' ')"
say "installing headers, linux-source and the dependencies ($deps) in the root"
# shellcheck disable=SC2086
in_root apt-get install -y -q "$h61" "$h612" linux-source-6.1 linux-source-6.12 $deps >"$logs/deps.log" 2>&1 ||
	{ tail -n 20 "$logs/deps.log" >&2; die "installing the dependencies failed ($logs/deps.log)"; }
in_root apt-get clean
# A real machine has the module indexes (its image's modules); depmod here
# too, so that DKMS's depmod does not look like files it left.
in_root depmod "$k61" 2>>"$logs/depmod.log" && in_root depmod "$k612" 2>>"$logs/depmod.log"

# Every path in the root, except what dpkg and apt keep about themselves,
# logs, caches and the test's own files.
file_list() {
	(cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp -o -path ./run \
		-o -path ./var/lib/dpkg -o -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log \
		-o -path ./root \) -prune -o -print) | LC_ALL=C sort
}
file_list >"$logs/files-before.txt"

# --- 3. install and check ------------------------------------------------------
t0=$SECONDS
in_root apt-get install -y "$t" "$d" >"$logs/install.log" 2>&1
rc=$?
# This install, not an earlier step, must be the one that set them up.
grep -q '^Setting up wirespeed (' "$logs/install.log" && grep -q '^Setting up wirespeed-usbnet-dkms (' "$logs/install.log"
okif $(( rc | $? )) "apt install ./$(basename "$t") ./$(basename "$d") (exit $rc, $((SECONDS - t0))s, DKMS builds included; both set up by this install; $logs/install.log)"
new="$(awk '/^The following NEW packages will be installed:/ { f = 1; next } f && /^  / { printf "%s", $0; next } { f = 0 }' "$logs/install.log" | xargs -n1 | grep -vx 'wirespeed\|wirespeed-usbnet-dkms' | xargs)"
[ -z "$new" ]; okif $? "the install pulled in nothing the baseline lacks (its dependencies are in the baseline)${new:+: $new}"

want="wirespeed $(dpkg-deb --fsys-tarfile "${tool[0]}" | tar -xOf - ./usr/bin/wirespeed >"$logs/wirespeed.bin" && chmod +x "$logs/wirespeed.bin" && "$logs/wirespeed.bin" --version | cut -d' ' -f2)"
got="$(in_root wirespeed --version 2>&1)"
[ "$got" = "$want" ]; okif $? "wirespeed --version: $got"
rm -f "$logs/wirespeed.bin"

in_root wirespeed inspect --json >"$logs/inspect.json" 2>"$logs/inspect.err"
rc=$?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("schema","").startswith("wirespeed.inspect/") and d.get("devices") else 1)' "$logs/inspect.json" 2>/dev/null
okif $(( rc | $? )) "wirespeed inspect --json (live, /sys read-only in the chroot): exit $rc, JSON with schema and devices"

in_root wirespeed doctor --from /tmp/fixture.tar.gz >"$logs/doctor.txt" 2>&1
rc=$?
[ $rc = 0 ] && [ -s "$logs/doctor.txt" ]; okif $? "wirespeed doctor --from $(basename "$fixture") (exit $rc, $(wc -l <"$logs/doctor.txt") lines)"

in_root sh -c 'MANWIDTH=80 man --warnings wirespeed 2>/tmp/man.err | col -b' >"$logs/man.txt"
rc=$?
grep -q 'wirespeed exporter' "$logs/man.txt" && grep -q '^EXIT STATUS' "$logs/man.txt" && [ ! -s "$root/tmp/man.err" ]
okif $(( rc | $? )) "man wirespeed renders, no warnings ($(wc -l <"$logs/man.txt") lines$( [ -s "$root/tmp/man.err" ] && echo ": $(head -c 300 "$root/tmp/man.err")"))"

# The fleet files, as contrib/ has them, where docs/fleet.md says.
bad=""
for f in contrib/grafana/*.json; do
	cmp -s "$f" "$root/usr/share/wirespeed/grafana/$(basename "$f")" || bad="$bad $f"
done
cmp -s contrib/prometheus/wirespeed.rules.yml "$root/usr/share/wirespeed/prometheus/wirespeed.rules.yml" || bad="$bad contrib/prometheus/wirespeed.rules.yml"
[ -z "$bad" ]; okif $? "/usr/share/wirespeed: $(cd "$root/usr/share/wirespeed" && find . -type f | sed 's|^\./||' | sort | xargs)${bad:+; missing or different:$bad}"
# Every installed path the man page's FILES names is there (/var/lib/wirespeed is tune's, made at run time).
bad=""
while read -r f; do
	case "$f" in /var/*) continue ;; esac
	[ -e "$root$f" ] || bad="$bad $f"
done < <(sed -n '/^FILES/,/^[A-Z]/{ s/^ \{7\}\(\/[^ ]*\)$/\1/p; }' "$logs/man.txt")
[ -z "$bad" ]; okif $? "the paths man wirespeed's FILES names are installed${bad:+; missing:$bad}"

out="$(in_root bash -c 'source /usr/share/bash-completion/completions/wirespeed && complete -p wirespeed' 2>&1)"
[[ "$out" == *"-F _wirespeed wirespeed"* ]]; okif $? "bash completion loads: $out"

out="$(in_root systemd-analyze verify /lib/systemd/system/wirespeed-exporter.service 2>&1)"
rc=$?
[ $rc = 0 ] && [ -z "$out" ]; okif $? "systemd-analyze verify wirespeed-exporter.service (exit $rc)${out:+: $out}"
out="$(in_root systemctl is-enabled wirespeed-exporter.service 2>&1)"
[ "$out" = disabled ]; okif $? "wirespeed-exporter.service is not enabled ($out)"

nmods="$(grep -c '^BUILT_MODULE_NAME\[' kernel/usbnet/dkms.conf)"
count_ko() { find "$root/lib/modules/$1/updates/dkms" -maxdepth 1 -type f -name '*.ko*' 2>/dev/null | wc -l; }
for k in "$k61" "$k612"; do
	n="$(count_ko "$k")"
	v="$(in_root modinfo -F vermagic "$(in_root modinfo -k "$k" -F filename usbnet 2>/dev/null)" 2>/dev/null)"
	[ "$n" = "$nmods" ] && [ "${v%% *}" = "$k" ]
	okif $? "DKMS built and installed for $k: $n of $nmods modules in updates/dkms, usbnet's vermagic ${v%% *}"
done
note "dkms status: $(in_root dkms status 2>/dev/null | tr '\n' ';')"
running="$(uname -r)"
if ! printf '%s\n' "$running" | grep -Eq "$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' kernel/usbnet/dkms.conf)"; then
	grep -q "kernel $running is not one these patches are for" "$logs/install.log"
	okif $? "postinst says the running kernel $running is not one the series builds for"
elif [ ! -f "$root/lib/modules/$running/build/Makefile" ]; then
	# a kernel of a supported family (this machine's 6.18, say) without headers in the root
	grep -q "the running kernel $running has no headers installed" "$logs/install.log"
	okif $? "postinst says the running kernel $running (a supported family) has no headers installed"
fi

# --- 4. remove, purge ---------------------------------------------------------
in_root apt-get remove -y wirespeed wirespeed-usbnet-dkms >"$logs/remove.log" 2>&1
rc=$?
left=$(( $(count_ko "$k61") + $(count_ko "$k612") ))
[ $rc = 0 ] && [ "$left" = 0 ] && [ ! -e "$root/usr/bin/wirespeed" ] && [ -z "$(in_root dkms status 2>/dev/null)" ]
okif $? "apt remove: exit $rc, $left modules left under updates/dkms, no /usr/bin/wirespeed, dkms status empty"
file_list >"$logs/files-removed.txt"
note "after remove (not purge), not in the baseline: $(comm -13 "$logs/files-before.txt" "$logs/files-removed.txt" | head -n 20 | tr '\n' ' ')"
in_root apt-get purge -y wirespeed wirespeed-usbnet-dkms >"$logs/purge.log" 2>&1
rc=$?
file_list >"$logs/files-after.txt"
# The whole difference in files-diff.txt; the summary names up to 20 paths.
comm -3 "$logs/files-before.txt" "$logs/files-after.txt" >"$logs/files-diff.txt"
nextra="$(comm -13 "$logs/files-before.txt" "$logs/files-after.txt" | wc -l)"
ngone="$(comm -23 "$logs/files-before.txt" "$logs/files-after.txt" | wc -l)"
extra="$(comm -13 "$logs/files-before.txt" "$logs/files-after.txt" | head -n 20 | tr '\n' ' ')"
gone="$(comm -23 "$logs/files-before.txt" "$logs/files-after.txt" | head -n 20 | tr '\n' ' ')"
[ $rc = 0 ] && [ "$nextra" = 0 ] && [ "$ngone" = 0 ]
okif $? "apt purge: exit $rc, the file list equals the baseline${extra:+; $nextra left: $extra}${gone:+; $ngone gone: $gone}"

if [ $failed = 0 ]; then say "all checks passed (summary: $summary)"; else say "FAILED (summary: $summary, logs: $logs)"; fi
exit $failed
