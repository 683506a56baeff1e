// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/shellquote"
)

// The scenarios' guest shell: the bench calls, and each topology built over busybox.

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
			q = append(q, shellquote.Quote(a))
		}
		rev := ""
		if d == "receive" {
			rev = " -R"
		}
		fmt.Fprintf(&b, "ws stage bench-%s\n", d)
		fmt.Fprintf(&b, "ws_counters before-%s\n", d)
		if o.Profile {
			fmt.Fprintf(&b, "ws_profile_start %s\n", d)
		}
		if o.RawIperf3 {
			fmt.Fprintf(&b, "%s/usr/bin/iperf3 -c %s -t %s -P %d -J%s > /results/iperf3-%s.json 2>/results/iperf3-%s.err || ws note 'iperf3 %s failed'\n", prefix, peer, secs, o.Streams, rev, d, d, d)
		} else {
			fmt.Fprintf(&b, "if ! %s%s > /results/bench-%s.txt 2>&1; then\n", prefix, strings.Join(q, " "), d)
			fmt.Fprintf(&b, "  ws note \"wirespeed bench %s failed: $(tail -n 3 /results/bench-%s.txt | tr '\\n' ' ')\"\n", d, d)
			fmt.Fprintf(&b, "  %s/usr/bin/iperf3 -c %s -t %s -P %d -J%s > /results/iperf3-%s.json 2>/results/iperf3-%s.err || ws note 'iperf3 %s failed too'\n", prefix, peer, secs, o.Streams, rev, d, d, d)
			fmt.Fprintf(&b, "fi\n")
		}
		if o.Profile {
			fmt.Fprintf(&b, "ws_profile_stop %s\n", d)
		}
		fmt.Fprintf(&b, "ws_counters after-%s\n", d)
	}
	return b.String()
}

func gadgetScript(o Options, bql bool) string {
	var b strings.Builder
	b.WriteString(busRateCheck(o))
	b.WriteString(gadgetSetup(o))
	var extra []string
	if bql {
		// A prio qdisc on the usbnet device: the probe goes to band 0 by its
		// TOS (EF), the load to band 1; without BQL the driver's own queue
		// (up to 60 URBs) sits below the qdisc and adds the latency. EF
		// (0xb8) gives skb->priority 4 (TC_PRIO_INTERACTIVE_BULK), which
		// prio's default priomap puts in band 1 with the bulk load: the
		// priomap here sends priority 4 to band 0.
		b.WriteString(guestText("bql.sh"))
		extra = []string{"--tos", "ef"}
	}
	b.WriteString(benchCalls(o, gadgetPeerAddr, "", extra...))
	if bql {
		b.WriteString(guestText("bql_end.sh"))
	}
	return b.String()
}

// gadgetSetup is gadget.sh for o: the loop of its gadget function, the
// device under test's knobs set.
func gadgetSetup(o Options) string {
	vals := append([]string{"@PEER@", gadgetPeerAddr, "@HOST@", gadgetHostAddr, "@DUT_KNOBS@", dutKnobs(o, "HIF")}, gadgetVars(o)...)
	return guestScript("gadget.sh", vals...)
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
	o.BenchArgs = append([]string{"--procs", strconv.Itoa(n)}, o.BenchArgs...)
	return guestScript("wireguard.sh", "@N@", strconv.Itoa(n), "@THREADED@", shellquote.Quote(threaded),
		"@BENCH@", benchCalls(o, "198.19.0.2", "/sbin/ip netns exec wga "))
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

// dutKnobs sets the device under test's sysfs threaded knob as asked
// (stock usbnet has no NAPI: the write fails, which is noted, not fatal)
// and its receive queues' RPS mask (--rps), and records what they say.
func dutKnobs(o Options, ifVar string) string {
	v := o.threadedValue()
	var b strings.Builder
	if v != "" {
		fmt.Fprintf(&b, "echo %s > /sys/class/net/$%s/threaded 2>/dev/null || ws note \"threaded=%s on $%s failed (no NAPI?)\"\n", v, ifVar, v, ifVar)
	}
	fmt.Fprintf(&b, "echo \"dut_threaded=$(cat /sys/class/net/$%s/threaded 2>/dev/null)\" >> /results/facts.txt\n", ifVar)
	if o.RPS != "" {
		fmt.Fprintf(&b, "for q in /sys/class/net/$%s/queues/rx-*; do echo %s > $q/rps_cpus || fail \"rps_cpus=%s on $q\"; done\n", ifVar, o.RPS, o.RPS)
		fmt.Fprintf(&b, "echo \"dut_rps=$(cat /sys/class/net/$%s/queues/rx-0/rps_cpus 2>/dev/null)\" >> /results/facts.txt\n", ifVar)
	}
	if o.BQLMax > 0 {
		fmt.Fprintf(&b, "for q in /sys/class/net/$%s/queues/tx-*; do echo %d > $q/byte_queue_limits/limit_max || fail \"limit_max=%d on $q\"; done\n", ifVar, o.BQLMax, o.BQLMax)
		fmt.Fprintf(&b, "echo \"dut_bql_limit_max=$(cat /sys/class/net/$%s/queues/tx-0/byte_queue_limits/limit_max 2>/dev/null)\" >> /results/facts.txt\n", ifVar)
	}
	if o.BQLMin > 0 {
		fmt.Fprintf(&b, "for q in /sys/class/net/$%s/queues/tx-*; do echo %d > $q/byte_queue_limits/limit_min || fail \"limit_min=%d on $q\"; done\n", ifVar, o.BQLMin, o.BQLMin)
		fmt.Fprintf(&b, "echo \"dut_bql_limit_min=$(cat /sys/class/net/$%s/queues/tx-0/byte_queue_limits/limit_min 2>/dev/null)\" >> /results/facts.txt\n", ifVar)
	}
	return b.String()
}

func nicScript(o Options) string {
	return guestScript("nic.sh", "@STAGE@", "usb-nic", "@DRIVER@", "cdc_ether", "@DEVICE@", "usb-net",
		"@GUEST@", nicGuestAddr, "@HOST@", nicHostAddr, "@DUT_KNOBS@", dutKnobs(o, "DIF")) + nicLoad(o, "cdc_ether")
}

// nicLoad is the usb-nic and usbdev scenarios' work on $DIF, bound by
// driver: the bench against the host namespace, then the tune step if
// asked (doctor sees where the xHCI interrupt runs from its count since
// boot, which an idle guest has too few of: the bench is the warm-up).
func nicLoad(o Options, driver string) string {
	s := benchCalls(o, nicHostAddr, "")
	if o.Tune != "" {
		s += tuneScript(o, driver, nicHostAddr)
	}
	return s
}
