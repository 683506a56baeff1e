#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fails if installing the given packages the way 'make setup',
# 'make setup-test' and 'make setup-lab' do (apt-get install --no-install-recommends) would
# install a kernel image: apt's simulation lists every package it would
# unpack. Also fails if a Makefile apt-get install line lacks
# --no-install-recommends (with recommends, wireguard-tools pulls
# wireguard-modules and with it linux-image-*).
# Usage: scripts/check-setup-packages.sh PKG...
# APT_FLAGS overrides the flags (to see the check fail:
# APT_FLAGS=--install-recommends scripts/check-setup-packages.sh wireguard-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	echo "usage: $0 PKG..." >&2
	exit 2
fi
bad=0
# Every install recipe must keep recommends out.
while IFS= read -r line; do
	case "$line" in
	*--no-install-recommends*) ;;
	*) echo "check-setup-packages: Makefile installs without --no-install-recommends: $line" >&2; bad=1 ;;
	esac
done < <(make -s -n setup setup-test setup-lab 2>/dev/null | grep -E 'apt-get install' || true)
if ! command -v apt-get >/dev/null; then
	echo "check-setup-packages: no apt-get here (not Debian): simulation skipped" >&2
	exit $bad
fi
read -ra flags <<<"${APT_FLAGS:---no-install-recommends}"
# -s simulates (no root needed, nothing changes); Debug::NoLocking lets it
# run while another apt holds the lock; an empty dpkg status makes it plan
# for a machine with nothing installed, so what this machine already has
# (a kernel a former setup pulled in, say) cannot hide a package.
status=$(mktemp)
trap 'rm -f "$status"' EXIT
if ! out=$(apt-get -s -o Debug::NoLocking=1 -o Dir::State::status="$status" install "${flags[@]}" "$@" 2>&1); then
	echo "$out" >&2
	echo "check-setup-packages: apt-get -s failed (run apt-get update?)" >&2
	exit 1
fi
kernels=$(printf '%s\n' "$out" | awk '$1 == "Inst" && $2 ~ /^linux-image/ {print $2}')
if [ -n "$kernels" ]; then
	echo "check-setup-packages: installing the setup packages would install a kernel image:" "$(echo "$kernels" | xargs)" >&2
	exit 1
fi
n=$(printf '%s\n' "$out" | awk '$1 == "Inst"' | wc -l)
echo "check-setup-packages: no kernel image among the $n package(s) apt would install on an empty machine for: $*"
exit $bad
