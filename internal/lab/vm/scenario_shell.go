package vm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The scenarios' guest shell: the bench calls, and each topology built over busybox.

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// benchCalls runs wirespeed bench (or plain iperf3) against peer for each
// direction. iperf3 -s must already listen at peer.
func benchCalls(o Options, peer, prefix string, extra ...string) string {
	dirs := []string{o.Direction}
	if o.Direction == "both" {
		dirs = []string{"send", "receive"}
	}
	var b strings.Builder
	secs := strconv.FormatFloat(o.Duration.Seconds(), 'f', -1, 64)
	omit := "1s"
	if o.Duration < 4*time.Second {
		omit = "0s"
	}
	for _, d := range dirs {
		args := []string{"/usr/bin/wirespeed", "bench", "--peer", peer, "-t", secs + "s", "--omit", omit, "--idle", "1s",
			"-P", strconv.Itoa(o.Streams), "--direction", d, "--out", "/results/bench-" + d + ".json"}
		args = append(args, extra...)
		args = append(args, o.BenchArgs...)
		var q []string
		for _, a := range args {
			q = append(q, shq(a))
		}
		rev := ""
		if d == "receive" {
			rev = " -R"
		}
		fmt.Fprintf(&b, "ws stage bench-%s\n", d)
		fmt.Fprintf(&b, "ws_counters before-%s\n", d)
		if o.RawIperf3 {
			fmt.Fprintf(&b, "%s/usr/bin/iperf3 -c %s -t %s -P %d -J%s > /results/iperf3-%s.json 2>/results/iperf3-%s.err || ws note 'iperf3 %s failed'\n", prefix, peer, secs, o.Streams, rev, d, d, d)
		} else {
			fmt.Fprintf(&b, "if ! %s%s > /results/bench-%s.txt 2>&1; then\n", prefix, strings.Join(q, " "), d)
			fmt.Fprintf(&b, "  ws note \"wirespeed bench %s failed: $(tail -n 3 /results/bench-%s.txt | tr '\\n' ' ')\"\n", d, d)
			fmt.Fprintf(&b, "  %s/usr/bin/iperf3 -c %s -t %s -P %d -J%s > /results/iperf3-%s.json 2>/results/iperf3-%s.err || ws note 'iperf3 %s failed too'\n", prefix, peer, secs, o.Streams, rev, d, d, d)
			fmt.Fprintf(&b, "fi\n")
		}
		fmt.Fprintf(&b, "ws_counters after-%s\n", d)
	}
	return b.String()
}

func gadgetScript(o Options, bql bool) string {
	var b strings.Builder
	b.WriteString(busRateCheck(o))
	b.WriteString(`ws stage gadget
G=/sys/kernel/config/usb_gadget/ws
mkdir -p $G || fail "configfs has no usb_gadget (is libcomposite loaded?)"
echo 0x1d6b > $G/idVendor
echo 0x0104 > $G/idProduct
mkdir -p $G/strings/0x409
echo wirespeed > $G/strings/0x409/manufacturer
echo "wirespeed NCM loopback" > $G/strings/0x409/product
echo 0001 > $G/strings/0x409/serialnumber
mkdir -p $G/configs/c.1 $G/functions/ncm.usb0 || fail "cannot create the NCM function (usb_f_ncm missing?)"
echo 500 > $G/configs/c.1/MaxPower
ln -s $G/functions/ncm.usb0 $G/configs/c.1/
UDC=$(ls /sys/class/udc | head -n 1)
[ -n "$UDC" ] || fail "no UDC: dummy_hcd did not register dummy_udc"
echo "$UDC" > $G/UDC || fail "cannot bind the gadget to $UDC"
GIF=$(cat $G/functions/ncm.usb0/ifname)
HIF=$(ws_wait_driver cdc_ncm 20) || fail "no cdc_ncm network device appeared within 20 s: the host side did not bind"
echo "gadget_if=$GIF" >> /results/facts.txt
echo "dut_if=$HIF" >> /results/facts.txt
echo "dut_driver=cdc_ncm" >> /results/facts.txt
echo "usb_speed=$(cat /sys/class/udc/$UDC/current_speed 2>/dev/null)" >> /results/facts.txt
/sbin/ip netns add gadget || fail "ip netns add gadget"
/sbin/ip link set "$GIF" netns gadget || fail "cannot move $GIF into the gadget namespace"
/sbin/ip -n gadget link set lo up
/sbin/ip -n gadget addr add ` + gadgetPeerAddr + `/30 dev "$GIF"
/sbin/ip -n gadget link set "$GIF" up
/sbin/ip addr add ` + gadgetHostAddr + `/30 dev "$HIF"
/sbin/ip link set "$HIF" up
` + dutThreaded(o, "HIF") + `/sbin/ip netns exec gadget /usr/bin/iperf3 -s -D -B ` + gadgetPeerAddr + ` || fail "iperf3 -s in the gadget namespace"
if ! ws_wait_ping ` + gadgetPeerAddr + ` 10; then
  # Seen in about 1 of 10 boots: the link stays silent after binding.
  # Record its state, then reopen both ends (cdc_ncm resubmits its
  # interrupt URB, f_ncm sends a new connection notification).
  { /sbin/ip -s link show "$HIF"; /sbin/ip -n gadget -s link show "$GIF"; cat /sys/class/net/$HIF/carrier; } > /results/link-stuck.txt 2>&1
  ws note "no answer from the gadget side within 10 s; reopening the NCM link"
  /sbin/ip link set "$HIF" down; /sbin/ip -n gadget link set "$GIF" down
  sleep 1
  /sbin/ip -n gadget link set "$GIF" up; /sbin/ip link set "$HIF" up
  ws_wait_ping ` + gadgetPeerAddr + ` 20 || fail "` + gadgetPeerAddr + ` (gadget side) does not answer ping over the NCM link, also after reopening it (see link-stuck.txt)"
fi
`)
	var extra []string
	if bql {
		// A prio qdisc on the usbnet device: the probe goes to band 0 by its
		// TOS (EF), the load to band 1; without BQL the driver's own queue
		// (up to 60 URBs) sits below the qdisc and adds the latency. EF
		// (0xb8) gives skb->priority 4 (TC_PRIO_INTERACTIVE_BULK), which
		// prio's default priomap puts in band 1 with the bulk load: the
		// priomap here sends priority 4 to band 0.
		b.WriteString(`/sbin/tc qdisc replace dev "$HIF" root handle 1: prio bands 3 priomap 1 2 2 2 0 2 0 0 1 1 1 1 1 1 1 1 || fail "tc prio failed"
/sbin/tc -s qdisc show dev "$HIF" > /results/qdisc-before.txt 2>&1
for q in /sys/class/net/$HIF/queues/tx-*/byte_queue_limits; do echo "$q limit=$(cat $q/limit) inflight=$(cat $q/inflight)"; done >> /results/facts.txt
`)
		extra = []string{"--tos", "ef"}
		// Twice a second through the bench: the qdisc's backlog and BQL's
		// limit and inflight, to see where the queue sits and DQL adapt.
		b.WriteString(`( while :; do
  echo "t=$(cut -d' ' -f1 /proc/uptime) $(/sbin/tc -s qdisc show dev "$HIF" | grep -o 'backlog [^ ]* [^ ]*' | head -n 1)" \
    "limit=$(cat /sys/class/net/$HIF/queues/tx-0/byte_queue_limits/limit) inflight=$(cat /sys/class/net/$HIF/queues/tx-0/byte_queue_limits/inflight)"
  sleep 0.5
done ) > /results/queue-samples.txt 2>&1 &
QSAMPLER=$!
`)
	}
	b.WriteString(benchCalls(o, gadgetPeerAddr, "", extra...))
	if bql {
		b.WriteString(`kill $QSAMPLER 2>/dev/null
/sbin/tc -s qdisc show dev "$HIF" > /results/qdisc-after.txt 2>&1
`)
	}
	return b.String()
}

// wireguardScript builds namespaces wga and wgb joined by a veth (the
// underlay, 198.18.4.0/24) and N tunnels wg0..wgN-1. Both ends hold one
// address on lo (198.19.0.1, 198.19.0.2); policy routing sends TCP port
// 5201+i (and its replies) through tunnel i, so 'wirespeed bench --procs N'
// against 198.19.0.2 puts one iperf3 client on each tunnel.
func wireguardScript(o Options) string {
	n := o.Tunnels
	if n <= 0 {
		n = 4
	}
	threaded := o.threadedValue()
	o.Streams = n // one flow per tunnel: -P N spread over --procs N, one per port
	var b strings.Builder
	fmt.Fprintf(&b, "N=%d THREADED=%s\n", n, shq(threaded))
	b.WriteString(`ws stage wireguard
A="/sbin/ip -n wga"; B="/sbin/ip -n wgb"
/sbin/ip netns add wga && /sbin/ip netns add wgb || fail "ip netns add"
/sbin/ip link add va netns wga type veth peer name vb netns wgb || fail "veth"
$A link set lo up; $B link set lo up
$A addr add 198.18.4.1/24 dev va; $B addr add 198.18.4.2/24 dev vb
$A link set va up; $B link set vb up
$A addr add 198.19.0.1/32 dev lo; $B addr add 198.19.0.2/32 dev lo
for ns in wga wgb; do
  /sbin/ip netns exec $ns sh -c 'for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 > $f; done'
done
i=0
while [ $i -lt $N ]; do
  port=$((51820 + i)); tport=$((5201 + i)); tbl=$((100 + i))
  umask 077; wg genkey > /tmp/ka$i; wg genkey > /tmp/kb$i
  pa=$(wg pubkey < /tmp/ka$i); pb=$(wg pubkey < /tmp/kb$i)
  $A link add wg$i type wireguard || fail "ip link add wg$i type wireguard"
  $B link add wg$i type wireguard || fail "ip link add wg$i type wireguard"
  /sbin/ip netns exec wga wg set wg$i listen-port $port private-key /tmp/ka$i peer $pb endpoint 198.18.4.2:$port allowed-ips 198.19.0.2/32 || fail "wg set wg$i (wga)"
  /sbin/ip netns exec wgb wg set wg$i listen-port $port private-key /tmp/kb$i peer $pa endpoint 198.18.4.1:$port allowed-ips 198.19.0.1/32 || fail "wg set wg$i (wgb)"
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
echo "napi_threads=$(ps | grep -c 'napi/w[g]')" >> /results/facts.txt
ws_wait_ping_ns() { i=0; while [ $i -lt $3 ]; do /sbin/ip netns exec $1 ping -c 1 -W 1 $2 > /dev/null 2>&1 && return 0; i=$((i + 1)); done; return 1; }
ws_wait_ping_ns wga 198.19.0.2 20 || fail "198.19.0.2 does not answer through wg0"
`)
	o.BenchArgs = append([]string{"--procs", strconv.Itoa(n)}, o.BenchArgs...)
	b.WriteString("DUT_NS=wga\n")
	b.WriteString(benchCalls(o, "198.19.0.2", "/sbin/ip netns exec wga "))
	// Every tunnel should have carried its flow.
	b.WriteString(`i=0
while [ $i -lt $N ]; do
  echo "wga.wg$i.tx_bytes=$(/sbin/ip netns exec wga cat /sys/class/net/wg$i/statistics/tx_bytes)" >> /results/facts.txt
  echo "wga.wg$i.rx_bytes=$(/sbin/ip netns exec wga cat /sys/class/net/wg$i/statistics/rx_bytes)" >> /results/facts.txt
  i=$((i + 1))
done
ps > /results/ps.txt
`)
	return b.String()
}

// threadedValue is what --threaded writes to a sysfs threaded knob: "1",
// "0", or "" to leave the kernel's default.
func (o Options) threadedValue() string {
	switch o.Threaded {
	case "on":
		return "1"
	case "off":
		return "0"
	}
	return ""
}

// dutThreaded sets the device under test's sysfs threaded knob as asked
// (stock usbnet has no NAPI: the write fails, which is noted, not fatal)
// and records what the knob says.
func dutThreaded(o Options, ifVar string) string {
	v := o.threadedValue()
	var b strings.Builder
	if v != "" {
		fmt.Fprintf(&b, "echo %s > /sys/class/net/$%s/threaded 2>/dev/null || ws note \"threaded=%s on $%s failed (no NAPI?)\"\n", v, ifVar, v, ifVar)
	}
	fmt.Fprintf(&b, "echo \"dut_threaded=$(cat /sys/class/net/$%s/threaded 2>/dev/null)\" >> /results/facts.txt\n", ifVar)
	return b.String()
}

func nicScript(o Options) string {
	return `ws stage usb-nic
DIF=$(ws_wait_driver cdc_ether 30) || fail "no cdc_ether network device appeared within 30 s (is the usb-net device on the xHCI bus?)"
echo "dut_if=$DIF" >> /results/facts.txt
echo "dut_driver=cdc_ether" >> /results/facts.txt
echo "usb_speed=$(cat /sys/class/net/$DIF/device/../speed 2>/dev/null)" >> /results/facts.txt
/sbin/ip addr add ` + nicGuestAddr + `/30 dev "$DIF"
/sbin/ip link set "$DIF" up
` + dutThreaded(o, "DIF") + `ws_wait_ping ` + nicHostAddr + ` 30 || fail "` + nicHostAddr + ` (the host namespace) does not answer ping over usb-net"
` + nicLoad(o)
}

// nicLoad is the usb-nic scenario's work: its bench, then the tune step
// if asked (doctor sees where the xHCI interrupt runs from its count since
// boot, which an idle guest has too few of: the bench is the warm-up).
func nicLoad(o Options) string {
	s := benchCalls(o, nicHostAddr, "")
	if o.Tune != "" {
		s += tuneScript(o)
	}
	return s
}
