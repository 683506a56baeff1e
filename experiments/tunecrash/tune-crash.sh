#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The tune crash harness at full length: SIGKILL 'wirespeed tune apply' at
# KILLS random points (default 120) on a veth pair in a test namespace and
# check after each that 'tune revert --all' restores every value byte for
# byte. Needs root. Writes the tally to experiments/tunecrash/data/result.json.
set -eu
cd "$(dirname "$0")/../.."
kills=${1:-120}
out=$(pwd)/experiments/tunecrash/data/result.json
mkdir -p "$(dirname "$out")"
WS_TUNE_CRASH_KILLS=$kills WS_TUNE_CRASH_OUT=$out \
	go test -count=1 -p 1 -run '^TestTuneCrash$' -v -timeout 30m ./internal/tune/
