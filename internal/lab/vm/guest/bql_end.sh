# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The bql scenario's end, after its bench (scenario_shell.go's
# gadgetScript): stops bql.sh's sampler, records the qdisc.

kill "$QSAMPLER" 2>/dev/null
/sbin/tc -s qdisc show dev "$HIF" > /results/qdisc-after.txt 2>&1
