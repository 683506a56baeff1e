# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The guest's /ws/lib.sh (scenario_init.go's initLib): the shell functions
# of main.sh, also used by /init. @MARKER@ is markerPrefix, which starts
# every line the host reads from the guest. /ws/env.sh (envScript) sets
# WS_TTY and WS_POWEROFF.
# shellcheck disable=SC1091 # /ws/env.sh is written per run (envScript)

[ -f /ws/env.sh ] && . /ws/env.sh
ws() { echo "@MARKER@ $* t=$(cut -d' ' -f1 /proc/uptime)"; }
ws_send() {
  dmesg > /results/dmesg.txt 2>&1
  cat /proc/interrupts > /results/interrupts-end.txt
  stty -F "$WS_TTY" raw -echo 2>/dev/null
  for f in /results/*; do
    [ -f "$f" ] || continue
    n=${f##*/}
    s=$(sha256sum < "$f"); s=${s%% *}
    { echo "@MARKER@-FILE $n $(wc -c < "$f") $s"; gzip -c "$f" | base64; echo "@MARKER@-EOF $n"; } > "$WS_TTY"
  done
  echo "@MARKER@-DONE" > "$WS_TTY"
}
finish() {
  if [ -n "$WS_OBS" ]; then
    kill -TERM "$WS_OBS" 2>/dev/null
    wait "$WS_OBS" 2>/dev/null
    WS_OBS=
  fi
  [ "$1" = 0 ] && ws_doctor
  ws_kmemleak
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
  /usr/bin/wirespeed doctor --json "$dev" > /results/doctor.json 2>> /results/doctor.err
  for r in /results/bench-receive.json /results/bench-send.json; do
    [ -f $r ] || continue
    /usr/bin/wirespeed doctor --json --result $r > /results/doctor-result.json 2>> /results/doctor.err
    break
  done
}
# ws_kmemleak: on a kernel with kmemleak (the lab's KASAN kernel), one
# scan at the end, its report in kmemleak.txt and the count of suspects in
# facts.txt (kmemleak_suspects; its scanning thread reports to the console
# only every 10 minutes, which no guard reads).
ws_kmemleak() {
  k=/sys/kernel/debug/kmemleak
  [ -e $k ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
  [ -w $k ] || return 0
  ws stage kmemleak
  echo scan > $k 2>/dev/null
  cat $k > /results/kmemleak.txt 2>/dev/null
  echo "kmemleak_suspects=$(grep -c '^unreferenced object' /results/kmemleak.txt)" >> /results/facts.txt
}
ws_driver_of() { d=$(readlink "/sys/class/net/$1/device/driver" 2>/dev/null); echo "${d##*/}"; }
# the network devices and their drivers, for a failure's message: what
# bound instead of the driver waited for
ws_net_drivers() {
  for n in /sys/class/net/*; do echo "${n##*/}=$(ws_driver_of "${n##*/}")"; done | tr '\n' ' '
}
ws_wait_driver() {
  i=0
  while [ $i -lt $(($2 * 10)) ]; do
    for n in /sys/class/net/*; do
      n=${n##*/}
      [ "$(ws_driver_of "$n")" = "$1" ] && { echo "$n"; return 0; }
    done
    usleep 100000; i=$((i + 1))
  done
  return 1
}
ws_wait_ping() {
  i=0
  while [ $i -lt "$2" ]; do
    ping -c 1 -W 1 "$1" > /dev/null 2>&1 && return 0
    i=$((i + 1))
  done
  return 1
}
ws_counters() {
  dev=$(grep '^dut_if=' /results/facts.txt | cut -d= -f2)
  [ -n "$dev" ] || return
  for c in rx_bytes tx_bytes rx_packets tx_packets rx_dropped tx_dropped rx_errors tx_errors; do
    if [ -n "$DUT_NS" ]; then v=$(/sbin/ip netns exec "$DUT_NS" cat "/sys/class/net/$dev/statistics/$c"); else v=$(cat "/sys/class/net/$dev/statistics/$c"); fi
    echo "$1.$c=$v"
  done >> /results/facts.txt
  cp /proc/softirqs "/results/softirqs-$1.txt"
  cp /proc/interrupts "/results/interrupts-$1.txt"
  cat /proc/net/softnet_stat > "/results/softnet-$1.txt"
  cp /proc/meminfo "/results/meminfo-$1.txt"
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
# --profile: a system-wide sampling profile of one bench (perf record,
# cpu-clock at 499 Hz on every vCPU, call chains) folded to one line per
# distinct stack, "cpu;comm;outermost;...;innermost count", in
# /results/profile-D.folded; perf's own messages in profile-D.err. The
# perf binary is the host's (x86 guests); it runs as root in the guest.
ws_profile_start() {
  WS_PERF=
  [ -x /usr/bin/perf ] || { ws note "profile: no perf in the guest"; return; }
  echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null
  echo -1 > /proc/sys/kernel/perf_event_paranoid 2>/dev/null
  HOME=/tmp /usr/bin/perf record -q -N -a -g -F 499 -e cpu-clock -o "/tmp/perf-$1.data" > "/results/profile-$1.err" 2>&1 &
  WS_PERF=$!
  sleep 1
  kill -0 "$WS_PERF" 2>/dev/null || { ws note "profile: perf record failed: $(tail -n 2 "/results/profile-$1.err" | tr '\n' ' ')"; WS_PERF=; }
}
ws_profile_stop() {
  [ -n "$WS_PERF" ] || return
  kill -INT "$WS_PERF"
  wait "$WS_PERF"
  WS_PERF=
  # perf finds no .ko of the guest's modules under /lib/modules/RELEASE:
  # it names their frames from /proc/kallsyms as [kernel.kallsyms], or in
  # some runs not at all ([unknown]; ws_fold keeps those frames'
  # addresses). The modules' symbols go along to name them afterwards.
  grep '\]$' /proc/kallsyms > /results/kallsyms-modules.txt
  HOME=/tmp /usr/bin/perf script -i "/tmp/perf-$1.data" -F cpu,comm,ip,sym,dso 2>> "/results/profile-$1.err" | ws_fold > "/results/profile-$1.folded"
  echo "profile_$1_samples=$(awk '{ t += $NF } END { print t + 0 }' "/results/profile-$1.folded")" >> /results/facts.txt
  rm -f "/tmp/perf-$1.data"
}
# ws_fold folds perf script's "comm [cpu]" blocks of "\tip sym (dso)"
# frames (innermost first) into "cpu;comm;outermost;...;innermost count";
# a frame is "sym (dso)" with spaces as _ and ; as :, and a kernel frame
# perf could not name is its address, "0xADDR ([unknown])".
ws_fold() {
  awk '
    function flush(  s, i) {
      if (head != "") { s = head; for (i = n; i >= 1; i--) s = s ";" fr[i]; cnt[s]++ }
      head = ""; n = 0
    }
    /^\t/ {
      f = $0; sub(/^\t[ ]*[0-9a-f]+ /, "", f); gsub(/;/, ":", f); gsub(/ /, "_", f)
      if (f == "[unknown]_([unknown])" && $1 ~ /^ffff/) f = "0x" $1 "_([unknown])"
      fr[++n] = f; next
    }
    /^[ ]*$/ { flush(); next }
    {
      flush(); h = $0; sub(/[ ]+$/, "", h); c = h; sub(/^.*\[/, "", c); sub(/\].*$/, "", c)
      sub(/[ ]+\[[0-9]+\]$/, "", h); sub(/^[ ]+/, "", h); gsub(/;/, ":", h); gsub(/ /, "_", h)
      head = (c + 0) ";" h
    }
    END { flush(); for (s in cnt) print s, cnt[s] }'
}
