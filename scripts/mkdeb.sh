#!/bin/bash
# mkdeb.sh [--version] - build the Debian packages into dist/ (make deb):
#   wirespeed_VERSION_amd64.deb, wirespeed_VERSION_arm64.deb   (make cross's
#       static binaries, man page, bash completion, exporter unit, Grafana
#       dashboards and Prometheus rules under /usr/share/wirespeed)
#   wirespeed-usbnet-dkms_VERSION_all.deb                     (kernel/usbnet
#       for DKMS)
# with dpkg-deb (see docs/packaging.md for why not nfpm or debhelper), then
# runs lintian on all three when it is installed (LINTIAN=0 skips it).
# --version only prints the version (scripts/version.sh).
#
# The files of a package come from packaging/PACKAGE/ (control.in,
# maintainer scripts, copyright, lintian-overrides) and the tree. A file
# the package must carry and that is missing fails the build, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "mkdeb: $*" >&2; exit 1; }
GO="${GO:-go}"

# --- the version ------------------------------------------------------------
# scripts/version.sh: MAJOR.MINOR.PATCH on a vMAJOR.MINOR.PATCH tag,
# MAJOR.MINOR.PATCH+gitN.HASH N commits after it, 0.0.0+gitTIME.HASH
# without one; semver and Debian-valid (native packages: no revision), and
# later commits sort later. The binary's --version says the same.
VERSION="$(scripts/version.sh)" || die "no version (above): make deb needs the git tree (a clean clone works)"
if [ "${1:-}" = --version ]; then echo "$VERSION"; exit 0; fi
[ $# = 0 ] || die "usage: $0 [--version]"

command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (apt-get install dpkg)"
# Reproducible: every file dated at the commit, gzip without names or times.
SOURCE_DATE_EPOCH="$(git log -1 --format=%ct HEAD)"
export SOURCE_DATE_EPOCH
MAINTAINER="${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' HEAD)}"
HOMEPAGE="https://github.com/wirespeed/wirespeed"
DKMS_VERSION="$(sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' kernel/usbnet/dkms.conf)"
[ -n "$DKMS_VERSION" ] || die "no PACKAGE_VERSION in kernel/usbnet/dkms.conf"
# WIRESPEED_RULES=FILE: take the rules from elsewhere (a test before they exist here).
RULES="${WIRESPEED_RULES:-contrib/prometheus/wirespeed.rules.yml}"
# The Grafana dashboards: one host in detail, and the fleet. Every
# contrib/grafana/*.json is shipped; these two must be there.
DASHBOARDS=(contrib/grafana/wirespeed-datapath.json contrib/grafana/wirespeed-fleet.json)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out=dist
mkdir -p "$out"
# One set of packages in dist/ (make deb-test installs what it finds).
rm -f "$out"/wirespeed_*.deb "$out"/wirespeed-usbnet-dkms_*.deb

need() { # FILE: fail clearly when a file the package carries is missing
	[ -f "$1" ] || die "$1 is missing: the package carries it ($2)"
}
need "$RULES" "the Prometheus alert rules, installed as /usr/share/wirespeed/prometheus/wirespeed.rules.yml"
for f in "${DASHBOARDS[@]}"; do
	need "$f" "a Grafana dashboard, installed under /usr/share/wirespeed/grafana"
done
for a in amd64 arm64; do
	need "dist/wirespeed-linux-$a" "the static binary from make cross"
done

# The host's own binary writes the man page and the completion (their
# content does not depend on the architecture).
case "$(uname -m)" in
x86_64) self=dist/wirespeed-linux-amd64 ;;
aarch64) self=dist/wirespeed-linux-arm64 ;;
*) die "no binary of make cross runs on $(uname -m) to write the man page with" ;;
esac

changelog() { # PACKAGE DIR: a native package's changelog.gz
	{
		echo "$1 ($VERSION) unstable; urgency=medium"
		echo
		echo "  * Built from git $(git rev-parse --short=12 HEAD) ($(git describe --always --dirty))."
		echo
		echo " -- $MAINTAINER  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
	} | gzip -9n >"$2/changelog.gz"
}

# finish STAGE PACKAGE ARCH: control file, md5sums, dates, then the .deb.
finish() {
	local st="$1" pkg="$2" arch="$3" size
	install -d -m 755 "$st/DEBIAN"
	# dpkg's rule: the sum of each file's size in KiB, rounded up (1 per dir, link).
	size="$(cd "$st" && find . -path ./DEBIAN -prune -o \( -type f -printf '%s\n' \) -o \( ! -name . -printf '1024\n' \) |
		awk '{ s += int(($1 + 1023) / 1024) } END { print s }')"
	sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$MAINTAINER|" \
		-e "s|@SIZE@|$size|" -e "s|@HOMEPAGE@|$HOMEPAGE|" "packaging/$pkg/control.in" >"$st/DEBIAN/control"
	for s in postinst prerm postrm; do
		[ -f "packaging/$pkg/$s" ] || continue
		sed -e "s|@DKMS_VERSION@|$DKMS_VERSION|g" "packaging/$pkg/$s" >"$st/DEBIAN/$s"
		chmod 755 "$st/DEBIAN/$s"
	done
	(cd "$st" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 -r md5sum) >"$st/DEBIAN/md5sums"
	chmod 644 "$st/DEBIAN/control" "$st/DEBIAN/md5sums"
	find "$st" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
	local deb="$out/${pkg}_${VERSION}_$arch.deb"
	dpkg-deb --root-owner-group -Zxz --build "$st" "$deb" >/dev/null
	echo "mkdeb: $deb ($(du -k "$deb" | cut -f1) KiB, Installed-Size $size KiB)"
}

doc_files() { # STAGE PACKAGE
	local d="$1/usr/share/doc/$2"
	install -d -m 755 "$d"
	changelog "$2" "$d"
	chmod 644 "$d/changelog.gz"
	if [ -f "packaging/$2/lintian-overrides" ]; then
		install -D -m 644 "packaging/$2/lintian-overrides" "$1/usr/share/lintian/overrides/$2"
	fi
}

# --- wirespeed_VERSION_ARCH.deb -------------------------------------------
man="$work/wirespeed.8"
"$self" __man >"$man" || die "$self __man failed"
"$self" __completion bash >"$work/completion" || die "$self __completion bash failed"
modules="$("$GO" version -m "$self" 2>/dev/null | awk '$1 == "dep" { printf " %s %s\n", $2, $3 }')"
[ -n "$modules" ] || die "$GO version -m $self lists no modules"
for arch in amd64 arm64; do
	st="$work/wirespeed-$arch"
	install -d -m 755 "$st/usr/bin" "$st/usr/share/man/man8" "$st/usr/share/bash-completion/completions" \
		"$st/usr/share/wirespeed/grafana" "$st/usr/share/wirespeed/prometheus" "$st/lib/systemd/system"
	install -m 755 "dist/wirespeed-linux-$arch" "$st/usr/bin/wirespeed"
	gzip -9n <"$man" >"$st/usr/share/man/man8/wirespeed.8.gz"
	chmod 644 "$st/usr/share/man/man8/wirespeed.8.gz"
	install -m 644 "$work/completion" "$st/usr/share/bash-completion/completions/wirespeed"
	# Only dashboards in grafana/: a Grafana file provider pointed at the
	# directory loads every JSON file in it.
	install -m 644 contrib/grafana/*.json "$st/usr/share/wirespeed/grafana/"
	install -m 644 "$RULES" "$st/usr/share/wirespeed/prometheus/wirespeed.rules.yml"
	install -m 644 packaging/wirespeed/wirespeed-exporter.service "$st/lib/systemd/system/"
	doc_files "$st" wirespeed
	awk -v m="$modules" '{ if ($0 == "@GOMODULES@") print m; else print }' packaging/wirespeed/copyright >"$st/usr/share/doc/wirespeed/copyright"
	chmod 644 "$st/usr/share/doc/wirespeed/copyright"
	finish "$st" wirespeed "$arch"
done

# --- wirespeed-usbnet-dkms_VERSION_all.deb --------------------------------
# What DKMS and build.sh use: dkms.conf, the scripts, the series; not the
# lab-only patches (lab/), the name-rule test nor .gitignore.
st="$work/dkms"
src="$st/usr/src/wirespeed-usbnet-$DKMS_VERSION"
install -d -m 755 "$src"
git ls-files -z kernel/usbnet | while IFS= read -r -d '' f; do
	rel="${f#kernel/usbnet/}"
	case "$rel" in lab/* | test-kver.sh | .gitignore) continue ;; esac
	mode=644
	[ -x "$f" ] && mode=755
	install -D -m "$mode" "$f" "$src/$rel"
done
for f in dkms.conf build.sh dkms-force-install.sh; do
	[ -f "$src/$f" ] || die "kernel/usbnet/$f is missing (or not in git): the DKMS package needs it"
done
# Every family dkms.conf accepts has its series in the package.
for fam in 6.1 6.12 6.18 7.x; do
	ls "$src/patches/$fam"/0001-*.patch >/dev/null 2>&1 ||
		die "kernel/usbnet/patches/$fam has no patches in git: dkms.conf accepts $fam kernels, the package would fail to build for them"
done
find "$src" -type d -exec chmod 755 {} +
doc_files "$st" wirespeed-usbnet-dkms
install -m 644 packaging/wirespeed-usbnet-dkms/copyright "$st/usr/share/doc/wirespeed-usbnet-dkms/copyright"
finish "$st" wirespeed-usbnet-dkms all

# --- lintian -----------------------------------------------------------------
debs=("$out/wirespeed_${VERSION}_amd64.deb" "$out/wirespeed_${VERSION}_arm64.deb" "$out/wirespeed-usbnet-dkms_${VERSION}_all.deb")
if [ "${LINTIAN:-1}" = 0 ]; then
	echo "mkdeb: lintian skipped (LINTIAN=0)"
elif ! command -v lintian >/dev/null; then
	echo "mkdeb: lintian is not installed (apt-get install --no-install-recommends lintian): not checked" >&2
else
	# Errors and warnings fail the build; the tags overridden (each with its
	# reason: packaging/*/lintian-overrides) are listed after.
	lint="$(lintian --fail-on error,warning --tag-display-limit 0 "${debs[@]}" 2>&1)" || {
		printf '%s\n' "$lint" >&2
		die "lintian found errors or warnings (above)"
	}
	lintian --show-overrides --tag-display-limit 0 "${debs[@]}" 2>/dev/null | grep '^O:' | sort -u | sed 's/^/mkdeb: lintian override: /' || true
	echo "mkdeb: lintian: no errors, no warnings"
fi
