#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# fuzz.sh [FUZZTIME] - run every Go fuzz target in the tree for FUZZTIME
# (default 3s) each. Targets are found, not listed: every 'func FuzzX(f
# *testing.F)' in a *_test.go file under internal/ or cmd/, so a new target is
# run without touching this script. Go fuzzes one target per 'go test' run.
# A failing input is written to the package's testdata/fuzz/FuzzX/ and
# stays there as a regression seed that plain 'go test' replays.
set -eu
t=${1:-3s}
go=${GO:-go}
# A Fuzz function the pattern below would miss (another parameter name, a
# line break) must not go unrun silently.
all=$(grep -rh --include='*_test.go' '^func Fuzz' internal cmd | wc -l)
seen=$(grep -rh --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' internal cmd | wc -l)
if [ "$all" -ne "$seen" ]; then
	echo "fuzz: $all Fuzz functions but $seen of the form 'func FuzzX(f *testing.F)': write them in that form" >&2
	grep -rn --include='*_test.go' '^func Fuzz' internal cmd | grep -v '(f \*testing.F)' >&2
	exit 1
fi
n=0
start=$(date +%s)
# shellcheck disable=SC2013 # words are what is wanted: Go file paths and Fuzz names hold no spaces (sh has no mapfile)
for f in $(grep -rl --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' internal cmd | sort); do
	dir=./$(dirname "$f")
	# shellcheck disable=SC2013 # as above
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing.F).*/\1/p' "$f"); do
		n=$((n + 1))
		echo "fuzz: $dir $name ($t)"
		ok=1
		out=$("$go" test "$dir" -run '^$' -fuzz "^$name\$" -fuzztime "$t" -fuzzminimizetime 2s 2>&1) || ok=0
		if [ "$ok" = 0 ] && printf '%s\n' "$out" | grep -q 'context deadline exceeded' &&
			! printf '%s\n' "$out" | grep -q 'Failing input written'; then
			# Go's fuzzing engine itself timed out stopping its workers
			# (seen on a loaded 2-CPU host): no input failed; run it again
			echo "fuzz: $name: the fuzzing engine timed out with no failing input; running it once more" >&2
			ok=1
			out=$("$go" test "$dir" -run '^$' -fuzz "^$name\$" -fuzztime "$t" -fuzzminimizetime 2s 2>&1) || ok=0
		fi
		if [ "$ok" = 0 ]; then
			printf '%s\n' "$out" | grep -v '^fuzz: elapsed' >&2
			echo "fuzz: $name in $dir FAILED (the input is under $dir/testdata/fuzz/$name/)" >&2
			exit 1
		fi
	done
done
[ "$n" -gt 0 ] || { echo "fuzz: no fuzz targets found" >&2; exit 1; }
echo "fuzz: $n targets, ${t} each, all passed in $(($(date +%s) - start)) s"
