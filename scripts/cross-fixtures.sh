#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cross-fixtures.sh AMD64_BIN ARM64_BIN - run the arm64 binary under
# qemu-user on every snapshot fixture (testdata/snapshots/*.tar.gz) with each
# command that reads a snapshot (inspect --from, doctor --from; text and
# --json), run the amd64 binary on the same, and fail with a diff unless
# stdout, stderr and exit status are equal byte for byte. make cross-check
# runs it on make cross's two binaries.
#
# Nothing is filtered before comparing: with --from, inspect and doctor print
# only what the snapshot holds (host.arch is the captured host's uname, the
# times are the capture's), and --version carries no architecture. If an
# output ever carries the running binary's own arch or a clock reading, drop
# that one field here, by name, and say why.
#
# qemu-aarch64 is called explicitly (QEMU_AARCH64 overrides which), so the
# check works with or without binfmt_misc. Without qemu-user it prints a
# note and passes: sudo make setup-lab installs qemu-user-static.
set -eu
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then
	echo "usage: $0 AMD64_BIN ARM64_BIN (make cross-check builds and passes them)" >&2
	exit 2
fi
host=$1
arm=$2
for b in "$host" "$arm"; do
	if [ ! -f "$b" ] || [ ! -x "$b" ]; then
		echo "cross-fixtures: $b: no such executable (make cross builds it)" >&2
		exit 2
	fi
done
# ELF e_machine (bytes 18-19, little endian): 0xb7 is aarch64, 0x3e x86-64.
# A swapped or wrong argument must not make the comparison vacuous.
machine() { od -An -tx1 -j18 -N2 "$1" | tr -d ' \n'; }
[ "$(machine "$arm")" = b700 ] || { echo "cross-fixtures: $arm is not an arm64 (aarch64) ELF binary" >&2; exit 2; }
[ "$(machine "$host")" = 3e00 ] || { echo "cross-fixtures: $host is not an amd64 (x86-64) ELF binary" >&2; exit 2; }
if [ "$(uname -m)" != x86_64 ]; then
	echo "note: the arm64 binary's fixture check skipped (it compares against the amd64 binary, which needs an x86_64 host; this is $(uname -m))"
	exit 0
fi

qemu=${QEMU_AARCH64:-}
if [ -n "$qemu" ]; then
	command -v "$qemu" >/dev/null || { echo "cross-fixtures: QEMU_AARCH64=$qemu: not found" >&2; exit 2; }
else
	for q in qemu-aarch64-static qemu-aarch64; do
		if command -v "$q" >/dev/null; then
			qemu=$q
			break
		fi
	done
fi
if [ -z "$qemu" ]; then
	echo "note: the arm64 binary's fixture check skipped (no qemu-aarch64-static or qemu-aarch64): sudo make setup-lab installs qemu-user-static"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
n=0
bad=0
# check NAME ARGS... - run both binaries with ARGS and compare.
check() {
	name=$1
	shift
	n=$((n + 1))
	rc=0
	"$qemu" "$arm" "$@" >"$tmp/arm.out" 2>"$tmp/arm.err" || rc=$?
	echo "exit status $rc" >"$tmp/arm.rc"
	rc=0
	"$host" "$@" >"$tmp/amd.out" 2>"$tmp/amd.err" || rc=$?
	echo "exit status $rc" >"$tmp/amd.rc"
	for s in out err rc; do
		if ! cmp -s "$tmp/amd.$s" "$tmp/arm.$s"; then
			what=std$s
			[ "$s" != rc ] || what="exit status"
			echo "cross-fixtures: $name: the arm64 binary's $what differs from the amd64 binary's (wirespeed $*):" >&2
			diff -u --label "amd64 $what" --label "arm64 $what" "$tmp/amd.$s" "$tmp/arm.$s" | head -100 >&2 || true
			bad=$((bad + 1))
		fi
	done
}

check version --version
fixtures=0
for f in testdata/snapshots/*.tar.gz; do
	[ -f "$f" ] || { echo "cross-fixtures: no fixtures in testdata/snapshots/" >&2; exit 1; }
	fixtures=$((fixtures + 1))
	for verb in inspect doctor; do
		check "$verb $(basename "$f")" "$verb" --from "$f"
		check "$verb --json $(basename "$f")" "$verb" --from "$f" --json
	done
done
# The error paths too: a file that is not a snapshot, and none at all.
check "not a snapshot" inspect --from testdata/snapshots/README.md
check "no file" doctor --from "$tmp/none.tar.gz"

if [ "$bad" -gt 0 ]; then
	echo "cross-fixtures: $bad of $n outputs of the arm64 binary (under $qemu) differ from the amd64 binary's" >&2
	exit 1
fi
echo "cross-fixtures: $n runs of the arm64 binary under $qemu ($fixtures fixtures, inspect and doctor --from, text and --json) equal the amd64 binary's, in $(($(date +%s) - start)) s"
