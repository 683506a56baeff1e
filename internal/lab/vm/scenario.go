package vm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// markerPrefix starts every line the guest's init prints for the host.
const markerPrefix = "@@WS"

// Options are a scenario run's settings.
type Options struct {
	Scenario string `json:"scenario"`
	// Arch is the guest's architecture: amd64 (default) or arm64.
	Arch string `json:"arch,omitempty"`
	// Machine is the board (machines): pc for amd64, raspi3b (default)
	// or virt for arm64.
	Machine string `json:"machine,omitempty"`
	// Duration is the load time of each bench run in the guest.
	Duration time.Duration `json:"duration_ns"`
	// Streams is iperf3 -P.
	Streams int `json:"streams"`
	// Directions: "send", "receive" or "both" (send, then receive, as two
	// bench runs). send means from the device under test to its peer.
	Direction string `json:"direction"`
	// Speed of the dummy_hcd link: super, high or full (usb-gadget, bql).
	Speed string `json:"speed,omitempty"`
	// Tunnels is the wireguard scenario's knob.
	Tunnels int `json:"tunnels,omitempty"`
	// Threaded: "on", "off" or "" (the kernel's default) for the NAPI of
	// the device under test (usb-gadget, bql, usb-nic) or of the
	// WireGuard devices.
	Threaded string `json:"threaded,omitempty"`
	// BenchArgs are extra 'wirespeed bench' flags (split on spaces).
	BenchArgs []string `json:"bench_args,omitempty"`
	// Load names extra modules (from the kernel or --modules-dir) to load
	// before the scenario, "name" or "name param=value ...".
	Load []string `json:"load,omitempty"`
	// Exec is a shell command the 'boot' scenario runs.
	Exec string `json:"exec,omitempty"`
	// RawIperf3 skips wirespeed bench and runs iperf3 -J directly.
	RawIperf3 bool `json:"raw_iperf3,omitempty"`
	// NoPin leaves the tracepoints observe uses off until it attaches (see
	// ws_pin_tracepoints in the guest's scripts).
	NoPin bool `json:"no_pin_tracepoints,omitempty"`
	// Cycles is the usbnet-stress scenario's number of disruptions.
	Cycles int `json:"cycles,omitempty"`
	// BusRate caps the dummy_hcd bus at this many Mbit/s (0: uncapped);
	// needs the lab build of dummy_hcd in --modules-dir (kernel/usbnet
	// build.sh --lab-bus), whose rate_mbit parameter does it.
	BusRate int `json:"bus_rate_mbit,omitempty"`
	// Steps are the usbnet-stress disruptions to take in turn (default
	// StressSteps).
	Steps []string `json:"steps,omitempty"`
	// Tune, when set, makes usb-nic run 'wirespeed tune apply' with these
	// extra flags (split on spaces) after its bench, then persist and a
	// re-plug (see tune.go).
	Tune string `json:"tune,omitempty"`
}

// Scenario is one guest topology and what runs in it.
type Scenario struct {
	Name    string
	Summary string
	// Modules the scenario loads, in the order given (each resolved with its
	// dependencies). params gives a module's parameters.
	Modules func(o Options) []string
	Params  func(o Options) map[string]string
	// Script is the shell body run by the guest's init after the modules load.
	Script func(o Options) string
	// USBNIC adds QEMU's xHCI + usb-net on a tap in a host namespace.
	USBNIC bool
	// MaxTime estimates the guest's run time for the hard timeout.
	MaxTime func(o Options) time.Duration
	// NoBench: the scenario runs no bench, so observe's tracepoints need
	// not be pinned before it.
	NoBench bool
}

// Addresses (RFC 2544 benchmarking range; only inside the guest or in the
// host namespace wirespeed creates).
const (
	gadgetHostAddr = "198.18.2.1" // guest, cdc_ncm side (usbnet)
	gadgetPeerAddr = "198.18.2.2" // guest, gadget namespace (u_ether / f_ncm)
	nicGuestAddr   = "198.18.3.2" // guest, cdc_ether (usbnet)
	nicHostAddr    = "198.18.3.1" // host namespace, tap
)

func benchTime(o Options) time.Duration {
	runs := 1
	if o.Direction == "both" {
		runs = 2
	}
	// idle 1s + load + omit + inspect and observe setup, per run
	return time.Duration(runs) * (o.Duration + 15*time.Second)
}

var scenarios = map[string]*Scenario{
	"usb-gadget": {
		Name:    "usb-gadget",
		Summary: "dummy_hcd + configfs NCM gadget looped back to cdc_ncm (usbnet); the gadget side in its own namespace",
		Modules: func(o Options) []string {
			return []string{"dummy_hcd", "libcomposite", "usb_f_ncm", "cdc_ncm", "configfs"}
		},
		Params:  func(o Options) map[string]string { return map[string]string{"dummy_hcd": busParams(o, o.Speed)} },
		Script:  func(o Options) string { return gadgetScript(o, false) },
		MaxTime: benchTime,
	},
	"bql": {
		Name:    "bql",
		Summary: "the NCM gadget link (super speed by default), slower than the host, so usbnet's TX queue fills; prio qdisc + prioritized probe under load",
		Modules: func(o Options) []string {
			return []string{"dummy_hcd", "libcomposite", "usb_f_ncm", "cdc_ncm", "configfs", "sch_prio"}
		},
		Params:  func(o Options) map[string]string { return map[string]string{"dummy_hcd": busParams(o, o.Speed)} },
		Script:  func(o Options) string { return gadgetScript(o, true) },
		MaxTime: benchTime,
	},
	"usb-nic": {
		Name:    "usb-nic",
		Summary: "QEMU's USB NIC (usb-net, CDC-ECM -> cdc_ether on usbnet; on qemu-xhci, or the Pi's DWC2 on raspi3b) on a tap in a host namespace running iperf3 natively",
		Modules: func(o Options) []string { return append(append([]string(nil), machineOf(o).USBHost...), "cdc_ether") },
		Script:  nicScript,
		USBNIC:  true,
		MaxTime: func(o Options) time.Duration {
			if o.Tune != "" {
				return benchTime(o) + tuneTime(o)
			}
			return benchTime(o)
		},
	},
	"wireguard": {
		Name:    "wireguard",
		Summary: "N WireGuard tunnels between two guest namespaces over a veth, one flow per tunnel (policy routing by port), threaded NAPI on or off",
		Modules: func(o Options) []string { return []string{"wireguard", "veth"} },
		Script:  wireguardScript,
		MaxTime: benchTime,
	},
	"boot": {
		Name:    "boot",
		NoBench: true,
		Summary: "boot, load the --load modules, run --exec CMD, return dmesg (for checking a kernel or a module)",
		Modules: func(o Options) []string { return nil },
		Script: func(o Options) string {
			cmd := o.Exec
			if strings.TrimSpace(cmd) == "" {
				cmd = "true"
			}
			return "ws stage exec\n/bin/sh -c " + shq(cmd) + " > /results/exec.txt 2>&1; echo \"exit=$?\" >> /results/exec.txt\n"
		},
		MaxTime: func(o Options) time.Duration { return 30 * time.Second },
	},
}

// ScenarioNames lists the scenarios, sorted.
func ScenarioNames() []string {
	var n []string
	for k := range scenarios {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Lookup returns a scenario or an error listing the known ones.
func Lookup(name string) (*Scenario, error) {
	if s, ok := scenarios[name]; ok {
		return s, nil
	}
	var lines []string
	for _, n := range ScenarioNames() {
		lines = append(lines, fmt.Sprintf("  %-11s %s", n, scenarios[n].Summary))
	}
	return nil, fmt.Errorf("unknown scenario %q; give one of these ('wirespeed lab vm list'):\n%s", name, strings.Join(lines, "\n"))
}

// ScenarioSummary returns a scenario's one-line description.
func ScenarioSummary(name string) string {
	if s, ok := scenarios[name]; ok {
		return s.Summary
	}
	return ""
}

// allModules is every module any scenario loads on a board: the base
// image holds them all, so one cached image serves every scenario.
func allModules(arch, machine string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range ScenarioNames() {
		o := Options{Speed: "super", Arch: arch, Machine: machine}
		for _, m := range append(append([]string(nil), machineOf(o).Platform...), scenarios[n].Modules(o)...) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// busParams are dummy_hcd's parameters for a speed and --bus-rate.
func busParams(o Options, speed string) string {
	p := dummyParams(speed)
	if o.BusRate > 0 {
		p += " rate_mbit=" + strconv.Itoa(o.BusRate)
	}
	return p
}

// busRateCheck fails the guest when --bus-rate was asked for and the
// dummy_hcd loaded does not apply it (the stock one has no rate_mbit and
// would only warn about the unknown parameter).
func busRateCheck(o Options) string {
	if o.BusRate <= 0 {
		return ""
	}
	return fmt.Sprintf(`[ "$(cat /sys/module/dummy_hcd/parameters/rate_mbit 2>/dev/null)" = %d ] || fail "--bus-rate %d: dummy_hcd has no rate_mbit=%d (give --modules-dir with the lab dummy_hcd: kernel/usbnet/build.sh --lab-bus)"
echo "bus_rate_mbit=%d" >> /results/facts.txt
`, o.BusRate, o.BusRate, o.BusRate, o.BusRate)
}

func dummyParams(speed string) string {
	switch speed {
	case "high":
		return "is_super_speed=0 is_high_speed=1"
	case "full":
		return "is_super_speed=0 is_high_speed=0"
	}
	return "is_super_speed=1 is_high_speed=1"
}

// ValidSpeed checks a --speed value.
func ValidSpeed(s string) error {
	switch s {
	case "super", "high", "full":
		return nil
	}
	return fmt.Errorf("speed %q: want super, high or full (dummy_hcd is_super_speed/is_high_speed)", s)
}

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
ws_pin_tracepoints() {
  /usr/bin/wirespeed observe --duration 3600 --json > /results/observe-session.json 2> /results/observe-session.err &
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
