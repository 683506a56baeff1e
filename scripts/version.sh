#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# version.sh - wirespeed's version, from git describe in the current
# directory's repository. The binary (make build, make cross: wirespeed
# --version) and the packages (make deb) take it; releases are annotated
# tags vMAJOR.MINOR.PATCH (CHANGELOG.md says what each holds):
#   on the tag v1.2.3                        1.2.3
#   5 commits after it, at abc1234           1.2.3+git5.abc1234
#   no release tag reachable (none made yet, a clone without tags or a
#   shallow one): 0.0.0+git20261126191827.abc1234, the commit time (UTC)
#   uncommitted changes                      1.2.3+dirty, 1.2.3+git5.abc1234.dirty
# Each is a semver (build metadata after +) and a Debian version, and for
# dpkg later commits sort later: the count after a tag grows, and without
# tags the commit time does; every tagless version sorts below 0.1.0.
# Tags that are not vMAJOR.MINOR.PATCH (v1.2, v1.2.3-rc1) are not releases
# and are passed over. Exit 1, saying why, outside a git tree.
set -euo pipefail
die() { echo "version.sh: $*" >&2; exit 1; }
git rev-parse --verify -q HEAD >/dev/null 2>&1 ||
	die "no git commit here ($(pwd)): the version comes from git describe (a clean clone works)"

num='(0|[1-9][0-9]*)'
d="$(git describe --tags --long --dirty --match 'v[0-9]*.[0-9]*.[0-9]*' --exclude 'v*-*' 2>/dev/null)" || d=""
dirty=""
case "$d" in *-dirty) dirty=dirty; d="${d%-dirty}" ;; esac
if [[ "$d" =~ ^v($num\.$num\.$num)-([0-9]+)-g([0-9a-f]+)$ ]]; then
	base="${BASH_REMATCH[1]}" n="${BASH_REMATCH[5]}" h="${BASH_REMATCH[6]}"
	if [ "$n" = 0 ]; then
		echo "$base${dirty:++$dirty}"
	else
		echo "$base+git$n.$h${dirty:+.$dirty}"
	fi
	exit 0
fi
# No release tag (git describe found none, or only one like v1.2.3.4 that
# the glob lets through): the commit time orders the builds.
[ -z "$d" ] || echo "version.sh: the nearest tag of $d is no vMAJOR.MINOR.PATCH: versioning as untagged" >&2
h="$(git rev-parse --short HEAD)"
t="$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)"
[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && dirty=dirty
echo "0.0.0+git$t.$h${dirty:+.$dirty}"
