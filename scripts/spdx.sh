#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# spdx.sh [--check] [FILE...] - every source file we wrote carries its
# licence as an SPDX-License-Identifier line, by path (README.md, Licence):
#   kernel/..., internal/observe/bpf/..., the lab's test module
#   (internal/lab/vm/testdata/wsbroken/)                    GPL-2.0-only
#   everything else                                        Apache-2.0
# Without --check it adds the line where it is missing (first line, after a
# #! line; Go gets a blank line after it so it is no package doc) and
# rewrites one that names another licence; run twice it changes nothing.
# With --check it changes nothing, lists each file whose line is missing or
# wrong, and exits 1 if there is any. FILEs default to every file git
# tracks; only source files are looked at (marked below), so after a merge
# `scripts/spdx.sh` brings new files in line.
#
# Marked: Go (not generated: a "// Code generated ... DO NOT EDIT." header,
# as bpf2go's *_bpfel.go have, exempts a file - make bpf would drop the line),
# C and headers, shell, Python, bpftrace, Makefiles and Kbuild, and
# .conf, .fragment, .yml, .service files and the packages' maintainer
# scripts and lintian overrides. Not marked: patches (diffs of the kernel's
# files; kernel/ is GPL-2.0-only as a whole), JSON and other data, the
# experiments' raw files (*/data/*) and test fixtures other than code.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
case "${1:-}" in -*) echo "usage: $0 [--check] [FILE...]" >&2; exit 2 ;; esac

# The functions answer in variables, not on stdout: a subshell per file
# would make the walk over the tree slow.

# licence PATH: id = the SPDX identifier the path's part is under.
licence() {
	case "$1" in
	kernel/* | internal/observe/bpf/* | internal/lab/vm/testdata/wsbroken/*) id=GPL-2.0-only ;;
	*) id=Apache-2.0 ;;
	esac
}

# comment PATH: lead = the comment leader the file's language takes;
# status 1 when the file is not one we mark.
comment() {
	local p="$1" base="${1##*/}"
	case "$p" in */data/* | data/*) return 1 ;; esac
	case "$base" in
	*.go | *.c | *.h | *.bt) lead='//'; return ;;
	*.sh | *.py | Makefile | Kbuild | *.mk) lead='#'; return ;;
	esac
	# Configuration-like files: ours, not fixtures.
	case "$p" in */testdata/* | testdata/*) return 1 ;; esac
	case "$base" in
	*.conf | *.fragment | *.yml | *.yaml | *.service) lead='#' ;;
	*) case "$p" in
		.ci/run | packaging/*/postinst | packaging/*/prerm | packaging/*/postrm | packaging/*/lintian-overrides) lead='#' ;;
		*) return 1 ;;
		esac ;;
	esac
}

# generated FILE: a Go file with the generated-code header before its
# package clause (https://go.dev/s/generatedcode).
generated() {
	local line re='^// Code generated .* DO NOT EDIT\.$'
	while IFS= read -r line; do
		[[ "$line" =~ $re ]] && return 0
		[[ "$line" == "package "* ]] && return 1
	done <"$1"
	return 1
}

# state FILE ID: st = ok, missing, or wrong with n = the line (of the
# first three) whose SPDX line names other.
state() {
	local f="$1" want="$2" line
	n=0
	while [ $n -lt 3 ] && IFS= read -r line; do
		n=$((n + 1))
		if [[ "$line" =~ SPDX-License-Identifier:[[:space:]]*([^[:space:]]+) ]]; then
			other="${BASH_REMATCH[1]}"
			if [ "$other" = "$want" ]; then st=ok; else st=wrong; fi
			return
		fi
	done <"$f"
	st=missing
}

# add FILE LEADER ID: the line first, or second after #!; Go files get a
# blank line after it. The file is rewritten in place (mode kept).
add() {
	local f="$1" tag="$2 SPDX-License-Identifier: $3" first tmp
	tmp="$(mktemp)"
	IFS= read -r first <"$f" || true
	{
		if [[ "$first" == '#!'* ]]; then
			printf '%s\n%s\n' "$first" "$tag"
			tail -n +2 "$f"
		else
			printf '%s\n' "$tag"
			[[ "$f" == *.go ]] && echo
			cat "$f"
		fi
	} >"$tmp"
	cat "$tmp" >"$f"
	rm -f "$tmp"
}

# fix FILE N ID: the identifier on line N becomes ID (the comment around
# it stays as it is).
fix() {
	local f="$1" n="$2" id="$3" tmp
	tmp="$(mktemp)"
	awk -v n="$n" -v id="$id" 'NR == n { sub(/SPDX-License-Identifier:[ \t]*[^ \t]+/, "SPDX-License-Identifier: " id) } { print }' "$f" >"$tmp"
	cat "$tmp" >"$f"
	rm -f "$tmp"
}

if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <(git ls-files)
fi

bad=0 changed=0
for f in "${files[@]}"; do
	if [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
	comment "$f" || continue
	if [[ "$f" == *.go ]] && generated "$f"; then continue; fi
	licence "$f"
	state "$f" "$id"
	case "$st" in
	ok) continue ;;
	missing)
		if [ $check = 1 ]; then echo "$f: no SPDX-License-Identifier line (wants $id)"; bad=1; continue; fi
		add "$f" "$lead" "$id" ;;
	wrong)
		if [ $check = 1 ]; then echo "$f: SPDX-License-Identifier $other on line $n, wants $id"; bad=1; continue; fi
		fix "$f" "$n" "$id" ;;
	esac
	changed=$((changed + 1))
	echo "spdx: $f: $id"
done
if [ $check = 1 ]; then
	[ $bad = 0 ] || echo "spdx: run scripts/spdx.sh to add the lines above (README.md, Licence)" >&2
	exit $bad
fi
echo "spdx: $changed file(s) changed"
