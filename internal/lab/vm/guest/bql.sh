# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The bql scenario's part of gadget.sh (scenario_shell.go's gadgetScript):
# a prio qdisc on the usbnet device $HIF and a sampler of its backlog and
# of BQL's limit and inflight, twice a second through the bench.
# shellcheck disable=SC2034 # QSAMPLER is bql_end.sh's, after the bench

/sbin/tc qdisc replace dev "$HIF" root handle 1: prio bands 3 priomap 1 2 2 2 0 2 0 0 1 1 1 1 1 1 1 1 || fail "tc prio failed"
/sbin/tc -s qdisc show dev "$HIF" > /results/qdisc-before.txt 2>&1
for q in /sys/class/net/"$HIF"/queues/tx-*/byte_queue_limits; do echo "$q limit=$(cat "$q/limit") inflight=$(cat "$q/inflight")"; done >> /results/facts.txt
( while :; do
  echo "t=$(cut -d' ' -f1 /proc/uptime) $(/sbin/tc -s qdisc show dev "$HIF" | grep -o 'backlog [^ ]* [^ ]*' | head -n 1)" \
    "limit=$(cat "/sys/class/net/$HIF/queues/tx-0/byte_queue_limits/limit") inflight=$(cat "/sys/class/net/$HIF/queues/tx-0/byte_queue_limits/inflight")"
  sleep 0.5
done ) > /results/queue-samples.txt 2>&1 &
QSAMPLER=$!
