#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# archive-run.sh RUNDIR... - make each finished run one file: the directory
# experiments/NAME/data/RUN becomes experiments/NAME/data/RUN.tar.gz (every
# file of the run, PLAN.md with the rest), which the tables' recomputation
# reads directly (experiments/internal/kit/archive.go). With no argument:
# every directory right under an experiments/*/data/ (make
# experiments-archive).
#
# The archive is the same bytes whoever makes it from the same files:
# names sorted, mtime 0, owner and group 0 with no names, modes u=rwX,go=rX,
# GNU tar format, gzip -9 -n (no name, no time). The archive is unpacked
# into a scratch directory and diff -r holds it against the run; only then
# is the directory removed (git rm when git tracks it) and the archive
# git-added.
set -euo pipefail
args=()
for a in "$@"; do
	args+=("$(realpath -m -- "$a")")
done
cd "$(dirname "$0")/.."

archive() {
	local dir=${1%/} data run out scratch
	data=$(dirname "$dir")
	run=$(basename "$dir")
	out="$data/$run.tar.gz"
	if [ "$(basename "$data")" != data ] || [ ! -d "$dir" ]; then
		echo "archive-run: $dir is not a run directory (experiments/NAME/data/RUN)" >&2
		return 1
	fi
	if [ -e "$out" ]; then
		echo "archive-run: $out exists already: move one of the two aside" >&2
		return 1
	fi
	tar --sort=name --format=gnu --mtime=@0 --owner=0 --group=0 --numeric-owner \
		--mode=u=rwX,go=rX -C "$data" -cf - "$run" | gzip -9 -n >"$out.tmp"
	scratch=$(mktemp -d)
	if ! tar -C "$scratch" -xzf "$out.tmp" || ! diff -r -- "$dir" "$scratch/$run" >&2; then
		rm -rf -- "$out.tmp" "$scratch"
		echo "archive-run: $out does not unpack to $dir: left the directory as it was" >&2
		return 1
	fi
	rm -rf -- "$scratch"
	mv "$out.tmp" "$out"
	if [ -n "$(git ls-files -- "$dir" | head -1)" ]; then
		git rm -r -q --cached -- "$dir"
	fi
	rm -rf -- "$dir"
	git add -- "$out"
	echo "archive-run: $dir -> $out ($(du -k "$out" | cut -f1) KiB)"
}

if [ ${#args[@]} -eq 0 ]; then
	for d in experiments/*/data/*/; do
		[ -d "$d" ] && args+=("$d")
	done
	if [ ${#args[@]} -eq 0 ]; then
		echo "archive-run: no run directory left under experiments/*/data/"
		exit 0
	fi
fi
fail=0
for d in "${args[@]}"; do
	archive "$d" || fail=1
done
exit "$fail"
