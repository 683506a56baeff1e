#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make bpf-check: are the committed eBPF objects and their Go bindings
# (internal/observe/*_bpfel.{o,go}) what make bpf builds from
# internal/observe/bpf/*.c? It runs gen.go's go:generate lines (bpf2go,
# whose version go.mod pins) on a copy of the C, then compares:
#  - the Go bindings, byte for byte (bpf2go writes them from the BTF types,
#    which do not change with the clang version);
#  - each object's programs and maps (sections, types, attach points,
#    licence, referenced maps; map types, sizes, entries, flags, key and
#    value types): TestBPFObjectsMatchRebuild in internal/observe;
#  - with PINNED_CLANG, the clang that built the committed objects, the
#    objects byte for byte too. Another clang emits other instructions (16
#    differs from 14 in most programs), so with it the instructions go
#    unchecked and this says so.
# The committed objects carry no compiler name (bpf2go strips DWARF, and
# BPF objects have no .comment); Debian 12's clang 14.0.6 rebuilds them
# byte for byte, Debian 12's clang-16 does not.
# Without clang, llvm-strip (llvm) or the libbpf headers (libbpf-dev) it
# notes the skip and passes - except under CI (CI set), where it fails:
# CI's make setup-lab installs them, so there it must run.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
# gen.go's go:generate lines read the compiler's flags from the Makefile's
# BPF_CFLAGS, which make exports
: "${BPF_CFLAGS:?set by the Makefile: run make bpf-check}"
PINNED_CLANG="Debian clang version 14.0.6"
obs=internal/observe

missing=""
command -v clang >/dev/null || missing="$missing clang"
command -v llvm-strip >/dev/null || missing="$missing llvm-strip (llvm)"
[ -f /usr/include/bpf/bpf_helpers.h ] || missing="$missing bpf/bpf_helpers.h (libbpf-dev)"
if [ -n "$missing" ]; then
	msg="bpf-check: no$missing: sudo make setup-lab installs clang, llvm and libbpf-dev"
	if [ -n "${CI:-}" ]; then
		echo "$msg (CI must run this check)" >&2
		exit 1
	fi
	echo "note: $msg - the eBPF objects were not checked against bpf/*.c"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/$obs"
cp go.mod go.sum "$work/"
cp "$obs/gen.go" "$work/$obs/"
cp -r "$obs/bpf" "$work/$obs/"
if ! (cd "$work" && "$GO" generate "./$obs/..." >"$work/generate.log" 2>&1); then
	cat "$work/generate.log" >&2
	echo "bpf-check: FAIL: make bpf's go generate failed on bpf/*.c (above)" >&2
	exit 1
fi
fail=0
committed=$(cd "$obs" && ls -- *_bpfel.o *_bpfel.go)
rebuilt=$(cd "$work/$obs" && { ls -- *_bpfel.o *_bpfel.go 2>/dev/null || true; })
if [ "$committed" != "$rebuilt" ]; then
	echo "bpf-check: FAIL: make bpf writes $(echo "$rebuilt" | xargs), the tree has $(echo "$committed" | xargs)" >&2
	fail=1
fi
for f in $(cd "$obs" && ls -- *_bpfel.go); do
	if ! cmp -s "$obs/$f" "$work/$obs/$f"; then
		diff -u "$obs/$f" "$work/$obs/$f" >&2 || true
		echo "bpf-check: FAIL: $obs/$f is not what bpf2go makes of bpf/*.c (above)" >&2
		fail=1
	fi
done
if ! BPF_CHECK_DIR="$work/$obs" "$GO" test -count=1 -run '^TestBPFObjectsMatchRebuild$' "./$obs/"; then
	echo "bpf-check: FAIL: the committed objects' programs or maps are not what bpf/*.c builds (above)" >&2
	fail=1
fi
cc=$(clang --version | sed -n 1p)
if [ "$cc" = "$PINNED_CLANG" ]; then
	for f in $(cd "$obs" && ls -- *_bpfel.o); do
		if ! cmp -s "$obs/$f" "$work/$obs/$f"; then
			echo "bpf-check: FAIL: $obs/$f is not byte for byte what $cc builds from bpf/*.c" >&2
			fail=1
		fi
	done
	exact="byte for byte, built by $cc"
else
	exact="programs and maps only: the instructions were not compared, since $cc is not the $PINNED_CLANG that built them (Debian 12's clang)"
fi
if [ "$fail" != 0 ]; then
	echo "bpf-check: run make bpf (with $PINNED_CLANG) and commit what it writes" >&2
	exit 1
fi
echo "bpf-check: ok: $obs/*_bpfel.{o,go} are what make bpf builds from bpf/*.c ($exact)"
