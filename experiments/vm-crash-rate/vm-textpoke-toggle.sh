# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# vm-textpoke-toggle.sh - run inside a lab guest ('wirespeed lab vm boot
# --exec "$(cat experiments/vm-crash-rate/vm-textpoke-toggle.sh)"'): turns the
# irq:softirq_entry trace event on and off (each turn patches kernel text
# with text_poke_bp(): the tracepoint's jump label in handle_softirqs and,
# for tracefs's command-line recording, sched_switch and sched_wakeup)
# while a busy loop on every other CPU keeps taking timer ticks and running
# softirqs through that code. It stops after WS_TOGGLES turns (default 300)
# or WS_SECONDS seconds of guest uptime (default 90), and logs its progress
# to the console every 25 turns. Under QEMU's multi-threaded TCG a vCPU can
# run a stale int3 of the patch ("Oops: int3"); the lab's guards catch it.
n=${WS_TOGGLES:-300}
stop=$(($(cut -d. -f1 /proc/uptime) + ${WS_SECONDS:-90}))
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
t=/sys/kernel/tracing/events/irq/softirq_entry/enable
[ -w $t ] || { echo "no $t"; exit 1; }
cpus=$(grep -c ^processor /proc/cpuinfo)
pids=
c=1
while [ $c -lt "$cpus" ]; do
	taskset -c $c sh -c 'while :; do :; done' &
	pids="$pids $!"
	c=$((c + 1))
done
i=0
start=$(cut -d' ' -f1 /proc/uptime)
while [ $i -lt "$n" ] && [ "$(cut -d. -f1 /proc/uptime)" -lt "$stop" ]; do
	echo 1 > $t
	echo 0 > $t
	i=$((i + 1))
	[ $((i % 25)) = 0 ] && echo "textpoke-toggle: $i turns" > /dev/kmsg
done
end=$(cut -d' ' -f1 /proc/uptime)
# shellcheck disable=SC2086 # $pids is a list of pids, split on purpose
kill $pids
echo "toggles=$i from=$start to=$end cpus=$cpus"
