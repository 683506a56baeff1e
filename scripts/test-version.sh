#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test-version.sh - scripts/version.sh on made-up repositories: untagged,
# on a release tag, after it, dirty, with tags that are no releases, and a
# shallow clone that lost the tag; every answer is a semver and, where dpkg
# is installed, the answers sort in the order of the commits. Exit 1 on
# the first mismatch (internal/housekeeping's TestVersionScript runs it).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fail=0
bad() { echo "test-version: FAIL: $*" >&2; fail=1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
versions=()
# expect NAME PATTERN: version.sh in the repository matches PATTERN (a bash
# regexp), is a semver; non-dirty answers are kept for the order check.
expect() {
	local v
	if ! v="$(cd "$work/r" && bash "$here/version.sh" 2>/dev/null)"; then bad "$1: version.sh failed"; return; fi
	[[ "$v" =~ $2 ]] || bad "$1: '$v', want /$2/"
	[[ "$v" =~ $semver ]] || bad "$1: '$v' is no semver"
	case "$v" in *dirty*) ;; *) versions+=("$v") ;; esac
}
commit() { # N: the Nth commit, at a fixed time N minutes after the first
	echo "$1" >"$work/r/f"
	git -C "$work/r" add f
	GIT_COMMITTER_DATE="2026-11-26T10:0$1:00Z" GIT_AUTHOR_DATE="2026-11-26T10:0$1:00Z" git -C "$work/r" commit -qm "c$1"
}
mkdir "$work/r" && git -C "$work/r" init -q
if (cd "$work/r" && bash "$here/version.sh" >/dev/null 2>&1); then bad "no commit yet: version.sh did not fail"; fi
commit 1
h() { git -C "$work/r" rev-parse --short HEAD; }
expect "untagged" "^0\.0\.0\+git20261126100100\.$(h)$"
echo x >"$work/r/f"
expect "untagged, dirty" "^0\.0\.0\+git20261126100100\.$(h)\.dirty$"
git -C "$work/r" checkout -q f
commit 2
git -C "$work/r" tag v0.9 && git -C "$work/r" tag v0.1.0-rc1 && git -C "$work/r" tag -a vnext -m x
expect "no release tag, other tags" "^0\.0\.0\+git20261126100200\.$(h)$"
git -C "$work/r" tag -a v0.1.0 -m "wirespeed 0.1.0"
expect "on v0.1.0" '^0\.1\.0$'
echo x >"$work/r/f"
expect "on v0.1.0, dirty" '^0\.1\.0\+dirty$'
git -C "$work/r" checkout -q f
commit 3
commit 4
expect "two after v0.1.0" "^0\.1\.0\+git2\.$(h)$"
echo x >"$work/r/f"
expect "two after, dirty" "^0\.1\.0\+git2\.$(h)\.dirty$"
git -C "$work/r" checkout -q f
git -C "$work/r" tag v0.1.1
expect "lightweight v0.1.1" '^0\.1\.1$'
commit 5
git -C "$work/r" tag -a v0.10.0 -m x
expect "on v0.10.0" '^0\.10\.0$'
# A shallow clone of the newest commit has no tag behind it (CI's clone).
git clone -q --depth 1 --no-tags "file://$work/r" "$work/shallow" 2>/dev/null
v="$(cd "$work/shallow" && bash "$here/version.sh" 2>&1)" || bad "shallow clone: version.sh failed: $v"
[[ "$v" =~ ^0\.0\.0\+git20261126100500\.[0-9a-f]+$ ]] || bad "shallow clone: '$v'"
# A directory outside any repository: a failure that says why.
mkdir "$work/plain"
out="$(cd "$work/plain" && bash "$here/version.sh" 2>&1)" && bad "outside git: version.sh succeeded: $out"
case "$out" in *"git describe"*) ;; *) bad "outside git: '$out' does not say why" ;; esac
# dpkg orders the commits' versions as the commits (each later than the last).
if command -v dpkg >/dev/null; then
	for ((i = 1; i < ${#versions[@]}; i++)); do
		dpkg --compare-versions "${versions[i - 1]}" lt "${versions[i]}" ||
			bad "dpkg sorts ${versions[i - 1]} not below ${versions[i]}"
	done
	dpkg --compare-versions "0.0~git20261124.023519.abc1234" lt "${versions[0]}" ||
		bad "the old tagless scheme's versions do not sort below ${versions[0]}: upgrades would fail"
fi
[ $fail = 0 ] && echo "test-version: ok (${#versions[@]} versions in order: ${versions[*]})"
exit $fail
