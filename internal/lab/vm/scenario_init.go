package vm

import (
	"fmt"
	"strings"
)

// The guest's /init: the wrapper, the shell library every scenario uses, and
// the script that loads the modules and runs the scenario.

// initWrapper is the guest's /init. It mounts the file systems and runs
// the scenario's script in a child shell, so that a script that dies (a
// syntax error, a killed shell) still sends what it has and powers off
// instead of panicking the kernel by ending init.
const initWrapper = `#!/bin/sh
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
/bin/sh /ws/main.sh
rc=$?
. /ws/lib.sh
ws fail "the scenario script ended without finishing (exit $rc)"
echo "the scenario script ended without finishing (exit $rc)" >> /results/error.txt
finish 1
`

// initLib holds the shell functions of main.sh, also used by the wrapper.
const initLib = `[ -f /ws/env.sh ] && . /ws/env.sh
ws() { echo "` + markerPrefix + ` $* t=$(cut -d' ' -f1 /proc/uptime)"; }
ws_send() {
  dmesg > /results/dmesg.txt 2>&1
  cat /proc/interrupts > /results/interrupts-end.txt
  stty -F $WS_TTY raw -echo 2>/dev/null
  for f in /results/*; do
    [ -f "$f" ] || continue
    n=${f##*/}
    s=$(sha256sum < "$f"); s=${s%% *}
    { echo "` + markerPrefix + `-FILE $n $(wc -c < "$f") $s"; gzip -c "$f" | base64; echo "` + markerPrefix + `-EOF $n"; } > $WS_TTY
  done
  echo "` + markerPrefix + `-DONE" > $WS_TTY
}
finish() {
  if [ -n "$WS_OBS" ]; then
    kill -TERM $WS_OBS 2>/dev/null
    wait $WS_OBS 2>/dev/null
    WS_OBS=
  fi
  [ "$1" = 0 ] && ws_doctor
  ws stage send
  ws_send
  ws result "$1"
  sync
  sleep 1
  $WS_POWEROFF
}
fail() { ws fail "$*"; echo "$*" > /results/error.txt; finish 1; }
# ws_doctor saves a snapshot of the guest and what doctor says about the
# device under test: from the snapshot, and from the last bench result
# (its observation and softnet samples).
ws_doctor() {
  dev=$(grep '^dut_if=' /results/facts.txt | cut -d= -f2)
  [ -n "$dev" ] && [ -z "$DUT_NS" ] || return 0
  ws stage doctor
  /usr/bin/wirespeed inspect --save /results/inspect.tar.gz > /dev/null 2> /results/doctor.err
  /usr/bin/wirespeed doctor --json $dev > /results/doctor.json 2>> /results/doctor.err
  for r in /results/bench-receive.json /results/bench-send.json; do
    [ -f $r ] || continue
    /usr/bin/wirespeed doctor --json --result $r > /results/doctor-result.json 2>> /results/doctor.err
    break
  done
}
ws_driver_of() { d=$(readlink /sys/class/net/$1/device/driver 2>/dev/null); echo "${d##*/}"; }
ws_wait_driver() {
  i=0
  while [ $i -lt $(($2 * 10)) ]; do
    for n in /sys/class/net/*; do
      n=${n##*/}
      [ "$(ws_driver_of $n)" = "$1" ] && { echo "$n"; return 0; }
    done
    usleep 100000; i=$((i + 1))
  done
  return 1
}
ws_wait_ping() {
  i=0
  while [ $i -lt $2 ]; do
    ping -c 1 -W 1 $1 > /dev/null 2>&1 && return 0
    i=$((i + 1))
  done
  return 1
}
ws_counters() {
  dev=$(grep '^dut_if=' /results/facts.txt | cut -d= -f2)
  [ -n "$dev" ] || return
  for c in rx_bytes tx_bytes rx_packets tx_packets rx_dropped tx_dropped rx_errors tx_errors; do
    if [ -n "$DUT_NS" ]; then v=$(/sbin/ip netns exec $DUT_NS cat /sys/class/net/$dev/statistics/$c); else v=$(cat /sys/class/net/$dev/statistics/$c); fi
    echo "$1.$c=$v"
  done >> /results/facts.txt
  cp /proc/softirqs /results/softirqs-$1.txt
  cp /proc/interrupts /results/interrupts-$1.txt
  cat /proc/net/softnet_stat > /results/softnet-$1.txt
}
# observe attaches eBPF programs to its tracepoints when a bench starts
# and detaches them when it ends. Registering the first probe of a
# tracepoint (and adding a second one, which turns its static call from the
# probe into the iterator) patches kernel text with text_poke_bp and an
# int3 - while the load runs - and under QEMU's multi-threaded TCG a vCPU
# can then execute the stale int3 ("Oops: int3" in handle_softirqs, then a
# panic in interrupt: 2 of 3 usb-gadget boots here). A background observe,
# started while the guest is idle, holds the perf probes of all those
# tracepoints for the whole session: the benches' own attaches then only
# raise a reference count and patch nothing. It also records the session.
# Classic programs, which is what holds perf probes: a raw (tp_btf) one
# would be a probe of its own, and the benches' sampled observers, classic
# too, would turn the tracepoint's static call into the iterator (a patch)
# when their perf probe joined it.
ws_pin_tracepoints() {
  # First, while idle (raw probes patch kernel text as they come and go):
  # whether observe's raw BTF tracepoint programs load on this kernel -
  # the light events that have one, attached raw in a 1 s continuous run.
  /usr/bin/wirespeed observe --programs auto --light --duration 1 --json > /results/observe-raw.json 2> /results/observe-raw.err
  echo "raw_programs=$(grep -c '"detail": "raw tracepoint (tp_btf)"' /results/observe-raw.json)" >> /results/facts.txt
  /usr/bin/wirespeed observe --programs classic --duration 3600 --json > /results/observe-session.json 2> /results/observe-session.err &
  WS_OBS=$!
  sleep 4
  if kill -0 $WS_OBS 2>/dev/null; then
    echo "tracepoints_pinned=1" >> /results/facts.txt
  else
    ws note "background observe failed: $(tail -n 2 /results/observe-session.err | tr '\n' ' ')"
    WS_OBS=
  fi
}
`

// envScript is /ws/env.sh, what the guest's scripts need to know of the
// board: the results channel's device and how to end the run.
func envScript(m *Machine) string {
	return fmt.Sprintf("WS_TTY=%s\nWS_POWEROFF=%s\n", m.ResultsTTY, shq(m.PowerOff))
}

// initScript is the guest's main script: load modules, run the scenario,
// send /results to the host over the results channel, power off.
func initScript(s *Scenario, o Options, loads []moduleLoad) string {
	var b strings.Builder
	b.WriteString(`#!/bin/sh
. /ws/lib.sh
trap 'fail "interrupted"' INT TERM
ws stage boot
echo "kernel=$(uname -r)" > /results/facts.txt
echo "cpus=$(nproc)" >> /results/facts.txt
echo "machine=` + machineOf(o).Name + `" >> /results/facts.txt
/sbin/ip link set lo up
ws stage modules
`)
	for _, l := range loads {
		fmt.Fprintf(&b, "insmod /lib/modules/ws/%s.ko %s || fail %s\n", l.Name, l.Params, shq("insmod "+l.Name+" failed (see the console log)"))
		fmt.Fprintf(&b, "echo %s >> /results/modules.txt\n", shq(l.Name+" "+l.Source))
	}
	b.WriteString("grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config 2>/dev/null\n")
	if !o.RawIperf3 && !o.NoPin && !s.NoBench {
		b.WriteString("ws_pin_tracepoints\n")
	}
	b.WriteString(s.Script(o))
	b.WriteString("finish 0\n")
	return b.String()
}

// moduleLoad is one insmod of the init script.
type moduleLoad struct {
	Name, Params string
	Source       string // "stock" or "modules-dir"
}
