# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The wireguard scenario (scenario_shell.go's wireguardScript): namespaces
# wga and wgb joined by a veth, @N@ tunnels wg0..wgN-1 with policy routing
# by port, so bench's --procs N puts one flow on each; @THREADED@ is the
# threaded knob's value, quoted ('' leaves the kernel's default);
# @BENCH@ is benchCalls' lines, run in wga.
# shellcheck disable=SC2129 # one fact a line, appended where it is learnt
# shellcheck disable=SC2034 # DUT_NS is lib.sh's ws_counters'

N=@N@ THREADED=@THREADED@
ws stage wireguard
A="/sbin/ip -n wga"; B="/sbin/ip -n wgb"
{ /sbin/ip netns add wga && /sbin/ip netns add wgb; } || fail "ip netns add"
/sbin/ip link add va netns wga type veth peer name vb netns wgb || fail "veth"
$A link set lo up; $B link set lo up
$A addr add 198.18.4.1/24 dev va; $B addr add 198.18.4.2/24 dev vb
$A link set va up; $B link set vb up
$A addr add 198.19.0.1/32 dev lo; $B addr add 198.19.0.2/32 dev lo
for ns in wga wgb; do
  # shellcheck disable=SC2016 # the inner sh expands $f
  /sbin/ip netns exec "$ns" sh -c 'for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 > $f; done'
done
i=0
while [ $i -lt $N ]; do
  port=$((51820 + i)); tport=$((5201 + i)); tbl=$((100 + i))
  umask 077; wg genkey > /tmp/ka$i; wg genkey > /tmp/kb$i
  pa=$(wg pubkey < /tmp/ka$i); pb=$(wg pubkey < /tmp/kb$i)
  $A link add wg$i type wireguard || fail "ip link add wg$i type wireguard"
  $B link add wg$i type wireguard || fail "ip link add wg$i type wireguard"
  /sbin/ip netns exec wga wg set "wg$i" listen-port "$port" private-key "/tmp/ka$i" peer "$pb" endpoint "198.18.4.2:$port" allowed-ips 198.19.0.2/32 || fail "wg set wg$i (wga)"
  /sbin/ip netns exec wgb wg set "wg$i" listen-port "$port" private-key "/tmp/kb$i" peer "$pa" endpoint "198.18.4.1:$port" allowed-ips 198.19.0.1/32 || fail "wg set wg$i (wgb)"
  $A link set wg$i up; $B link set wg$i up
  if [ -n "$THREADED" ]; then
    /sbin/ip netns exec wga sh -c "echo $THREADED > /sys/class/net/wg$i/threaded" || ws note "threaded=$THREADED on wga/wg$i failed"
    /sbin/ip netns exec wgb sh -c "echo $THREADED > /sys/class/net/wg$i/threaded" || ws note "threaded=$THREADED on wgb/wg$i failed"
  fi
  $A route add 198.19.0.2/32 dev wg$i src 198.19.0.1 table $tbl
  $B route add 198.19.0.1/32 dev wg$i src 198.19.0.2 table $tbl
  $A rule add ipproto 6 dport $tport table $tbl || fail "ip rule dport"
  $A rule add ipproto 6 sport $tport table $tbl
  $B rule add ipproto 6 sport $tport table $tbl
  $B rule add ipproto 6 dport $tport table $tbl
  /sbin/ip netns exec wgb /usr/bin/iperf3 -s -D -p $tport -B 198.19.0.2 || fail "iperf3 -s on port $tport"
  i=$((i + 1))
done
$A route add 198.19.0.2/32 dev wg0 src 198.19.0.1
$B route add 198.19.0.1/32 dev wg0 src 198.19.0.2
echo "dut_if=wg0" >> /results/facts.txt
echo "dut_driver=wireguard" >> /results/facts.txt
echo "tunnels=$N" >> /results/facts.txt
echo "threaded_wgb_wg0=$(/sbin/ip netns exec wgb cat /sys/class/net/wg0/threaded)" >> /results/facts.txt
# shellcheck disable=SC2009 # busybox's pgrep cannot count
echo "napi_threads=$(ps | grep -c 'napi/w[g]')" >> /results/facts.txt
ws_wait_ping_ns() { i=0; while [ $i -lt "$3" ]; do /sbin/ip netns exec "$1" ping -c 1 -W 1 "$2" > /dev/null 2>&1 && return 0; i=$((i + 1)); done; return 1; }
ws_wait_ping_ns wga 198.19.0.2 20 || fail "198.19.0.2 does not answer through wg0"
DUT_NS=wga
@BENCH@
i=0
while [ $i -lt $N ]; do
  echo "wga.wg$i.tx_bytes=$(/sbin/ip netns exec wga cat /sys/class/net/wg$i/statistics/tx_bytes)" >> /results/facts.txt
  echo "wga.wg$i.rx_bytes=$(/sbin/ip netns exec wga cat /sys/class/net/wg$i/statistics/rx_bytes)" >> /results/facts.txt
  i=$((i + 1))
done
ps > /results/ps.txt
