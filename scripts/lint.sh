#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make lint: staticcheck over every Go package and shellcheck over every
# shell script git tracks - a tracked file named *.sh or whose #! line
# names sh, bash or dash (the Debian maintainer scripts, the guest scripts
# of internal/lab/vm/guest, which carry a shellcheck shell= directive).
# A missing linter fails, saying what to install: lint must not pass
# because it did not run. shellcheck -x follows a sourced file that a
# source= directive names (a path from the top of the tree, where this runs).
#
# staticcheck runs through 'go run' at the version pinned below: no
# install step, no PATH to set, the same version for every developer and
# CI, built once into Go's cache; and it stays out of go.mod, whose
# dependency versions it would otherwise move. v0.7.0 (2026.1) is the
# newest release that builds with go.mod's Go 1.25; it also knows 1.26.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
GO=${GO:-go}
STATICCHECK=${STATICCHECK:-honnef.co/go/tools/cmd/staticcheck@v0.7.0}
fail=0

# shell_scripts prints the tracked shell scripts, one a line.
shell_scripts() {
	git ls-files -z | while IFS= read -r -d '' f; do
		if [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
		case $f in
		*.sh) echo "$f"; continue ;;
		esac
		IFS= read -r first < "$f" 2>/dev/null || continue
		if [[ $first =~ ^#![[:space:]]*(/usr)?/bin/(env[[:space:]]+)?(ba|da)?sh([[:space:]]|$) ]]; then
			echo "$f"
		fi
	done
}

echo "lint: staticcheck ($STATICCHECK) ./... and experiments/ (a module of its own)"
if ! out=$($GO run "$STATICCHECK" -version 2>&1); then
	echo "$out" >&2
	echo "lint: FAIL: cannot build staticcheck ($STATICCHECK, above): it needs Go $(sed -n 's/^go //p' go.mod) or newer and the Go module proxy (GOPROXY), or a module cache that has it" >&2
	fail=1
elif ! $GO run "$STATICCHECK" ./... || ! (cd experiments && $GO run "$STATICCHECK" ./...); then
	echo "lint: FAIL: staticcheck's findings above" >&2
	fail=1
fi

mapfile -t scripts < <(shell_scripts)
echo "lint: shellcheck, ${#scripts[@]} scripts"
if ! command -v shellcheck >/dev/null; then
	echo "lint: FAIL: no shellcheck: apt-get install --no-install-recommends shellcheck (sudo make setup-test installs it)" >&2
	fail=1
elif [ "${#scripts[@]}" -eq 0 ]; then
	echo "lint: FAIL: found no shell scripts (is this a git checkout?)" >&2
	fail=1
elif ! shellcheck -x -f gcc "${scripts[@]}"; then
	echo "lint: FAIL: shellcheck's findings above" >&2
	fail=1
fi

[ "$fail" = 0 ] && echo "lint: ok"
exit "$fail"
