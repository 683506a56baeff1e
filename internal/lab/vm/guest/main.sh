#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The head of the guest's main script, /ws/main.sh (scenario_init.go's
# initScript), which adds the module loads, the scenario's script and
# 'finish 0'. @MACHINE@ is the board's name.
# shellcheck disable=SC1091 # /ws/lib.sh is guest/lib.sh, read in the guest

. /ws/lib.sh
trap 'fail "interrupted"' INT TERM
ws stage boot
echo "kernel=$(uname -r)" > /results/facts.txt
echo "cpus=$(nproc)" >> /results/facts.txt
echo "machine=@MACHINE@" >> /results/facts.txt
/sbin/ip link set lo up
ws stage modules
