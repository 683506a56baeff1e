#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The guest's /init (scenario_init.go's initWrapper). It mounts the file
# systems and runs the scenario's script, /ws/main.sh, in a child shell, so
# that a script that dies (a syntax error, a killed shell) still sends what
# it has and powers off instead of panicking the kernel by ending init.
# shellcheck disable=SC1091 # /ws/lib.sh is guest/lib.sh, read in the guest
# shellcheck disable=SC3045 # busybox sh's ulimit has -l

export PATH=/sbin:/usr/sbin:/bin:/usr/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts
mount -t devpts devpts /dev/pts
mount -t tmpfs run /run
mkdir -p /run/netns
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ulimit -l unlimited 2>/dev/null
# every sysrq: the lab's stall dump sends alt-sysrq-l through QEMU's
# monitor, for the backtrace of every CPU (monitor.go)
echo 1 >/proc/sys/kernel/sysrq 2>/dev/null
/bin/sh /ws/main.sh
rc=$?
. /ws/lib.sh
ws fail "the scenario script ended without finishing (exit $rc)"
echo "the scenario script ended without finishing (exit $rc)" >> /results/error.txt
finish 1
