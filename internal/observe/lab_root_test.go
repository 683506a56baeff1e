// SPDX-License-Identifier: Apache-2.0

package observe

// Root integration tests in the host lab (internal/lab): they build two
// namespaces joined by a veth pair, drive iperf3 through it and check what
// observe reports against the kernel's own counters. They skip when not
// root or when iperf3/ip/ethtool are missing.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab"
	"github.com/wirespeed/wirespeed/internal/procfs"
	"github.com/wirespeed/wirespeed/internal/testnet"
)

func needLab(t *testing.T) {
	t.Helper()
	testnet.NeedRoot(t)
	if err := lab.Check(); err != nil {
		t.Skipf("host lab unavailable: %v", err)
	}
	for _, tool := range []string{"iperf3", "ethtool", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

var labSeq atomic.Int32

// upLab builds a lab and renames the receiver veth to a name unique to this
// test: tracepoints name devices without their namespace, and other labs on
// this host use the same ws-rcv name.
func upLab(t *testing.T, cfg lab.Config) (*lab.Lab, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := lab.Up(ctx, cfg)
	if err != nil {
		t.Fatalf("lab up: %v", err)
	}
	t.Cleanup(func() { l.Down() })
	name := fmt.Sprintf("wso%d-%d", os.Getpid()%100000, labSeq.Add(1))
	for _, argv := range [][]string{
		{"link", "set", "dev", l.ReceiverIf, "down"},
		{"link", "set", "dev", l.ReceiverIf, "name", name},
		{"link", "set", "dev", name, "up"},
	} {
		out, err := exec.CommandContext(ctx, "ip", append([]string{"-n", l.ReceiverNS}, argv...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip %v: %v: %s", argv, err, out)
		}
	}
	l.ReceiverIf = name
	return l, name
}

// load runs a TCP bulk iperf3 for secs seconds, optionally pinned to a CPU.
func load(t *testing.T, l *lab.Lab, secs int, pin *int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+20)*time.Second)
	defer cancel()
	argv := []string{"iperf3", "-c", l.ReceiverAddr.String(), "-p", strconv.Itoa(l.ServerPorts[0]),
		"-t", strconv.Itoa(secs), "-P", "2", "-J"}
	if pin != nil {
		argv = append([]string{"taskset", "-c", strconv.Itoa(*pin)}, argv...)
	}
	var out bytes.Buffer
	cmd := l.Command(ctx, l.SenderNS, argv...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("iperf3: %v: %s", err, lastLines(out.String(), 5))
	}
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

func rxPackets(t *testing.T, l *lab.Lab) uint64 {
	t.Helper()
	s, err := testnet.ReadSysfs(context.Background(), l.ReceiverNS, "/sys/class/net/"+l.ReceiverIf+"/statistics/rx_packets")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func netRX(t *testing.T) []uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/softirqs")
	if err != nil {
		t.Fatal(err)
	}
	s, err := procfs.ParseSoftirqs(b)
	if err != nil {
		t.Fatal(err)
	}
	return s.Counts["NET_RX"]
}

// observeLoad observes the lab's receiver while load runs and cross-checks
// the receiver's packet counter against the events counted for it.
type observed struct {
	o         *Observation
	dev       *Device
	backlog   *Device // the per-CPU backlog NAPIs, shown with netif_rx devices
	rxPackets uint64  // receiver rx_packets delta inside the window
	netRX     []uint64
}

func observeLoad(t *testing.T, l *lab.Lab, secs int, pin *int) observed {
	return observeLoadOpts(t, l, secs, pin, Options{})
}

// observeLoadOpts is observeLoad with options (the receiver is filled in).
func observeLoadOpts(t *testing.T, l *lab.Lab, secs int, pin *int, opts Options) observed {
	t.Helper()
	opts.Ifaces = []string{l.ReceiverIf}
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer s.Close()
	sq0 := netRX(t)
	p0 := rxPackets(t, l)
	before, err := s.ReadRaw()
	if err != nil {
		t.Fatal(err)
	}
	load(t, l, secs, pin)
	p1 := rxPackets(t, l)
	sq1 := netRX(t)
	after, err := s.ReadRaw()
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(after, before)
	o := Build(d, s.meta(before.At, after.At.Sub(before.At), d.Attached))
	var buf bytes.Buffer
	WriteText(&buf, o)
	t.Logf("observation:\n%s", buf.String())
	ob := observed{o: o, rxPackets: p1 - p0}
	for i, d := range o.Devices {
		switch d.Name {
		case l.ReceiverIf:
			ob.dev = &o.Devices[i]
		case BacklogDev:
			ob.backlog = &o.Devices[i]
		default:
			t.Errorf("device %s reported, asked only for %s", d.Name, l.ReceiverIf)
		}
	}
	if ob.dev == nil {
		t.Fatalf("%s not in the observation", l.ReceiverIf)
	}
	for i := range sq1 {
		ob.netRX = append(ob.netRX, sq1[i]-sq0[i])
	}
	return ob
}

// within reports whether got is within frac of want (plus slack events).
func within(got, want uint64, frac float64, slack uint64) bool {
	d := float64(got) - float64(want)
	if d < 0 {
		d = -d
	}
	return d <= frac*float64(want)+float64(slack)
}

// checkSoftirqs compares the NET_RX softirqs counted by the BPF program with
// /proc/softirqs deltas read just outside the window (so the BPF count can
// only be smaller, and by little).
func checkSoftirqs(t *testing.T, ob observed) {
	t.Helper()
	for _, c := range ob.o.CPUs {
		if c.CPU >= len(ob.netRX) {
			continue
		}
		want := ob.netRX[c.CPU]
		// The kernel counts a softirq in /proc/softirqs just before its
		// softirq_entry tracepoint fires: one that starts while the
		// "before" snapshot is read on another CPU is in the snapshot and
		// in BPF's count too. So BPF may be ahead by one per window edge,
		// never by more (seen: 87746 against 87745).
		if c.NetRX > want+2 || !within(c.NetRX, want, 0.05, 200) {
			t.Errorf("cpu%d: BPF counted %d NET_RX softirqs, /proc/softirqs says %d", c.CPU, c.NetRX, want)
		}
	}
}

func TestLabGROOffIsNetifRxBacklog(t *testing.T) {
	needLab(t)
	l, _ := upLab(t, lab.Config{GRO: false, SenderOffloadsOff: true})
	ob := observeLoad(t, l, 3, nil)
	d := ob.dev
	if d.RXPath != PathNetifRx {
		t.Errorf("RX path = %q (%s), want %q", d.RXPath, d.RXPathNote, PathNetifRx)
	}
	if d.GROSegments != 0 || d.GRORatio != nil {
		t.Errorf("GRO segments = %d, want 0 with receiver GRO off", d.GROSegments)
	}
	if !within(d.NetifRx, ob.rxPackets, 0.02, 100) {
		t.Errorf("netif_rx events = %d, receiver rx_packets delta = %d", d.NetifRx, ob.rxPackets)
	}
	// The backlog NAPIs did that work (plus the sender's ACKs, also netif_rx).
	var work uint64
	if ob.backlog != nil {
		for _, n := range ob.backlog.NAPIs {
			work += n.Work
		}
	}
	if work < d.NetifRx*95/100 {
		t.Errorf("backlog NAPIs polled %d packets for %d netif_rx", work, d.NetifRx)
	}
	checkSoftirqs(t, ob)
}

func TestLabGROOnIsNAPIWithGRO(t *testing.T) {
	needLab(t)
	l, _ := upLab(t, lab.Config{GRO: true, SenderOffloadsOff: true})
	ob := observeLoad(t, l, 3, nil)
	d := ob.dev
	if d.RXPath != PathNAPIGRO {
		t.Errorf("RX path = %q (%s), want %q", d.RXPath, d.RXPathNote, PathNAPIGRO)
	}
	if d.GRORatio == nil || *d.GRORatio < 2 {
		t.Errorf("GRO ratio = %v, want clearly above 1 (sender TSO/GSO off, TCP bulk)", d.GRORatio)
	}
	// veth counts rx_packets per segment before GRO.
	if !within(d.GROSegments, ob.rxPackets, 0.02, 100) {
		t.Errorf("GRO input segments = %d, receiver rx_packets delta = %d", d.GROSegments, ob.rxPackets)
	}
	if len(d.NAPIs) == 0 || len(d.NAPIIDs) == 0 {
		t.Fatalf("no NAPI seen for %s: %+v", d.Name, d)
	}
	for _, n := range d.NAPIs {
		if n.Budget == 0 || len(n.Hist) == 0 {
			t.Errorf("NAPI %s: budget %d, histogram %v", n.Napi, n.Budget, n.Hist)
		}
		for _, c := range n.Contexts {
			if c.Kind != "softirq" {
				t.Errorf("NAPI %s polled in %s %s[%d], want softirq (not threaded)", n.Napi, c.Kind, c.Comm, c.PID)
			}
		}
	}
	checkSoftirqs(t, ob)
}

// napiThreads lists pids of napi/<dev>-<id> kthreads from /proc.
func napiThreads(t *testing.T, dev string) map[uint32]string {
	t.Helper()
	out := map[uint32]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		comm := strings.TrimSpace(string(b))
		if strings.HasPrefix(comm, "napi/"+dev+"-") {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			out[uint32(pid)] = comm
		}
	}
	return out
}

func TestLabThreadedPollsInKthread(t *testing.T) {
	needLab(t)
	l, name := upLab(t, lab.Config{GRO: true, Threaded: true, SenderOffloadsOff: true})
	threads := napiThreads(t, name)
	if len(threads) == 0 {
		t.Fatalf("no napi/%s-* kthread in /proc after enabling threaded", name)
	}
	ob := observeLoad(t, l, 3, nil)
	d := ob.dev
	if d.RXPath != PathNAPIGRO {
		t.Errorf("RX path = %q, want %q", d.RXPath, PathNAPIGRO)
	}
	var polls, inThread uint64
	for _, n := range d.NAPIs {
		for _, c := range n.Contexts {
			polls += c.Polls
			if c.Kind == "thread" {
				if _, ok := threads[c.PID]; !ok {
					t.Errorf("polls in pid %d (%s), not one of the napi/%s-* kthreads %v", c.PID, c.Comm, name, threads)
				}
				inThread += c.Polls
			}
		}
	}
	if polls == 0 || inThread < polls*95/100 {
		t.Errorf("%d of %d polls in the napi kthread, want (nearly) all", inThread, polls)
	}
}

func TestLabPinnedPollsOnCPU0(t *testing.T) {
	needLab(t)
	zero := 0
	l, _ := upLab(t, lab.Config{GRO: true, SenderOffloadsOff: true, PinSender: &zero, PinReceiver: &zero})
	ob := observeLoad(t, l, 3, &zero)
	d := ob.dev
	var polls, cpu0 uint64
	for _, n := range d.NAPIs {
		for _, c := range n.CPUs {
			polls += c.Polls
			if c.CPU == 0 {
				cpu0 += c.Polls
			}
		}
	}
	if polls == 0 || cpu0 < polls*95/100 {
		t.Errorf("%d of %d polls on CPU 0, want (nearly) all with sender and receiver pinned to CPU 0", cpu0, polls)
	}
}
