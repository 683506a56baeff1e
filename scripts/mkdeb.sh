#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
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
# maintainer scripts, copyright, lintian-overrides; wirespeed's go-modules)
# and the tree. A file the package must carry and that is missing fails the
# build, naming it.
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

# dep5_text FILE: the file as the continuation lines of a DEP-5 field - a
# space before each line, " ." for an empty one, no blank lines at either
# end, in UTF-8 (a Latin-1 file is converted).
dep5_text() {
	local conv=cat
	iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 || conv="iconv -f ISO-8859-1 -t UTF-8"
	$conv "$1" | sed -e 's/[[:space:]]*$//' | awk '
		NF == 0 { if (seen) blank++; next }
		{ for (; blank > 0; blank--) print " ."; seen = 1; print " " $0 }'
}

# trim TEXT: without its leading and trailing blanks.
trim() {
	local s="$1"
	s="${s#"${s%%[![:space:]]*}"}"
	printf '%s' "${s%"${s##*[![:space:]]}"}"
}

# module_paragraph MODULE VERSION: the module's DEP-5 paragraph, from its
# line in packaging/wirespeed/go-modules and its files in the module cache.
module_paragraph() {
	local m="$1" v="$2" line lic files holders dir f notice="" first=1 h
	line="$(awk -F ' [|] ' -v m="$m" '$1 == m' packaging/wirespeed/go-modules)"
	if [ -z "$line" ]; then
		echo "mkdeb: the binary links the Go module $m $v, which packaging/wirespeed/go-modules does not list: add its licence there" >&2
		return 1
	fi
	IFS='|' read -r _ lic files holders <<<"$line"
	lic="$(trim "$lic")" files="$(trim "$files")" holders="$(trim "$holders")"
	dir="$("$GO" mod download -json "$m@$v" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
	[ -d "$dir" ] || { echo "mkdeb: $m $v is not in the module cache (go mod download $m@$v)" >&2; return 1; }
	echo "Files: vendor/$m/*"
	while IFS= read -r h; do
		if [ $first = 1 ]; then echo "Copyright: $h"; first=0; else echo " $h"; fi
	done < <(echo "$holders" | tr ';' '\n' | sed 's/^ *//')
	echo "License: $lic"
	for f in $files; do
		[ "$f" = - ] && continue
		[ -f "$dir/$f" ] || { echo "mkdeb: $m $v has no $f (packaging/wirespeed/go-modules)" >&2; return 1; }
		case "$f" in NOTICE*) notice="$notice $f" ;; *) dep5_text "$dir/$f" ;; esac
	done
	echo "Comment: The Go module $m $v, linked into /usr/bin/wirespeed."
	for f in $notice; do
		echo " Its $f file:"
		dep5_text "$dir/$f"
	done
	echo
}

# --- wirespeed_VERSION_ARCH.deb -------------------------------------------
man="$work/wirespeed.8"
"$self" __man >"$man" || die "$self __man failed"
"$self" __completion bash >"$work/completion" || die "$self __completion bash failed"
# The copyright file (DEP-5): packaging/wirespeed/copyright with a
# paragraph for the Go standard library and one per module the binary
# links, each with its licence text from the module cache.
"$GO" version -m "$self" 2>/dev/null | awk '$1 == "dep" { print $2, $3 }' >"$work/modules"
[ -s "$work/modules" ] || die "$GO version -m $self lists no modules"
dep5_text "$("$GO" env GOROOT)/LICENSE" >"$work/golicense"
go_version="$("$GO" version "$self" | awk '{ print $NF }')"
while read -r m v; do
	module_paragraph "$m" "$v" || die "no copyright paragraph for the Go module $m (above)"
done <"$work/modules" >"$work/modules.dep5"
awk -v gv="$go_version" -v lic="$work/golicense" -v mods="$work/modules.dep5" '
	$0 == "@GOLICENSE@" { while ((getline l < lic) > 0) print l; next }
	$0 == "@GOMODULES@" { while ((getline l < mods) > 0) print l; next }
	{ gsub(/@GOVERSION@/, gv); print }' packaging/wirespeed/copyright >"$work/copyright"
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
	install -m 644 "$work/copyright" "$st/usr/share/doc/wirespeed/copyright"
	chmod 644 "$st/usr/share/doc/wirespeed/copyright"
	finish "$st" wirespeed "$arch"
done

# --- wirespeed-usbnet-dkms_VERSION_all.deb --------------------------------
# What DKMS and build.sh use: dkms.conf, the scripts, the series; not the
# lab-only patches (lab/), the staged ones never applied (staging/), the
# name-rule test, the DKMS check that builds clean Debian roots
# (dkms-check.sh, a developer's tool) nor .gitignore.
st="$work/dkms"
src="$st/usr/src/wirespeed-usbnet-$DKMS_VERSION"
install -d -m 755 "$src"
git ls-files -z kernel/usbnet | while IFS= read -r -d '' f; do
	rel="${f#kernel/usbnet/}"
	case "$rel" in lab/* | staging/* | test-kver.sh | dkms-check.sh | .gitignore) continue ;; esac
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
