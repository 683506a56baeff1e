package observe

// Root integration tests in the host lab (internal/lab): they build two
// namespaces joined by a veth pair, drive iperf3 through it and check what
// observe reports against the kernel's own counters. They skip when not
// root or when iperf3/ip/ethtool are missing.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

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
		if c.NetRX > want || !within(c.NetRX, want, 0.05, 200) {
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

func TestLabLightMode(t *testing.T) {
	needLab(t)
	l, _ := upLab(t, lab.Config{GRO: true, SenderOffloadsOff: true})
	ob := observeLoadOpts(t, l, 3, nil, Options{Light: true})
	d := ob.dev
	if d.RXPath != PathNAPIGRO || d.GRORatio == nil || *d.GRORatio < 2 {
		t.Errorf("light, GRO on: %q ratio %v", d.RXPath, d.GRORatio)
	}
	// NAPI work stands in for GRO input: it must match the packet counter.
	if !within(d.GROSegments, ob.rxPackets, 0.02, 100) {
		t.Errorf("NAPI work = %d, receiver rx_packets delta = %d", d.GROSegments, ob.rxPackets)
	}
	for _, e := range ob.o.Events {
		if e.Event == "net:napi_gro_receive_entry" && e.Status != "skipped" {
			t.Errorf("light mode attached %s: %+v", e.Event, e)
		}
	}
	l2, _ := upLab(t, lab.Config{GRO: false, SenderOffloadsOff: true})
	if d := observeLoadOpts(t, l2, 2, nil, Options{Light: true}).dev; d.RXPath != PathNetifRx {
		t.Errorf("light, GRO off: %q", d.RXPath)
	}
}

// Sampled observation (--sample 20%) must tell what continuous observation
// tells - the same RX path, about the same GRO ratio, believable shares of
// a CPU in NET_RX - from a fifth of the time, with rates that, times the
// wall time, give back what the kernel's counters saw.
func TestLabSampledAgreesWithContinuous(t *testing.T) {
	needLab(t)
	for _, c := range []struct {
		name  string
		cfg   lab.Config
		light bool
	}{
		{"gro-on", lab.Config{GRO: true, SenderOffloadsOff: true}, false},
		{"gro-on-light", lab.Config{GRO: true, SenderOffloadsOff: true}, true},
		{"gro-off", lab.Config{GRO: false, SenderOffloadsOff: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, _ := upLab(t, c.cfg)
			cont := observeLoadOpts(t, l, 3, nil, Options{Light: c.light})
			samp := observeLoadOpts(t, l, 5, nil, Options{Light: c.light, Sample: 0.2})
			o, d, cd := samp.o, samp.dev, cont.dev
			if o.Sample == nil || o.Sample.Fraction != 0.2 {
				t.Fatalf("sample block %+v", o.Sample)
			}
			if f := o.Sample.AttachedSec / o.DurationSec; f < 0.1 || f > 0.4 {
				t.Errorf("attached %.2f s of %.2f s (%.0f%%), want about 20%%", o.Sample.AttachedSec, o.DurationSec, 100*f)
			}
			if d.RXPath != cd.RXPath {
				t.Errorf("sampled RX path %q, continuous %q", d.RXPath, cd.RXPath)
			}
			switch {
			case (d.GRORatio == nil) != (cd.GRORatio == nil):
				t.Errorf("sampled GRO ratio %v, continuous %v", d.GRORatio, cd.GRORatio)
			case d.GRORatio != nil:
				if r := *d.GRORatio / *cd.GRORatio; r < 0.6 || r > 1/0.6 {
					t.Errorf("sampled GRO ratio %.1f, continuous %.1f", *d.GRORatio, *cd.GRORatio)
				}
			}
			// The programs were detached most of the time: they saw a
			// fraction of the packets, and the rates over attached time
			// extrapolate to all of them.
			seen := d.GROSegments + d.NetifRx
			est := (d.GROSegmentsPerSec + d.NetifRxPerSec) * o.DurationSec
			if seen == 0 || seen > samp.rxPackets/2 {
				t.Errorf("sampled: %d packets counted of %d received; want about a fifth", seen, samp.rxPackets)
			}
			if est < 0.6*float64(samp.rxPackets) || est > 1.4*float64(samp.rxPackets) {
				t.Errorf("sampled: %.0f packets/s over attached time x %.2f s = %.0f, receiver counted %d",
					d.GROSegmentsPerSec+d.NetifRxPerSec, o.DurationSec, est, samp.rxPackets)
			}
			var top float64
			for _, cpu := range o.CPUs {
				if cpu.NetRXShare < 0 || cpu.NetRXShare > 1.02 {
					t.Errorf("cpu%d: NET_RX share %.3f of attached time", cpu.CPU, cpu.NetRXShare)
				}
				top = max(top, cpu.NetRXShare)
				if cpu.CPU < len(samp.netRX) && samp.netRX[cpu.CPU] > 1000 {
					if r := float64(cpu.NetRX) / float64(samp.netRX[cpu.CPU]); r < 0.05 || r > 0.5 {
						t.Errorf("cpu%d: %d NET_RX softirqs counted, /proc/softirqs %d: want about a fifth",
							cpu.CPU, cpu.NetRX, samp.netRX[cpu.CPU])
					}
				}
			}
			if top < 0.01 {
				t.Errorf("NET_RX share at most %.4f under load", top)
			}
			// Placement: a window may open inside a softirq (its polls then
			// look like task polls), but softirq must dominate.
			if c.cfg.GRO {
				var polls, soft uint64
				for _, n := range d.NAPIs {
					for _, x := range n.Contexts {
						polls += x.Polls
						if x.Kind == "softirq" {
							soft += x.Polls
						}
					}
				}
				if polls == 0 || soft < polls*9/10 {
					t.Errorf("%d of %d polls in softirq, want nearly all", soft, polls)
				}
			}
		})
	}
}

// ourPerfBPF counts this process's perf events that have a BPF program
// attached, as bpftool sees them.
func ourPerfBPF(t *testing.T) int {
	out, err := exec.Command("bpftool", "perf", "show", "-j").Output()
	if err != nil {
		t.Errorf("bpftool perf show: %v", err)
		return -1
	}
	var entries []struct {
		PID    int `json:"pid"`
		ProgID int `json:"prog_id"`
	}
	if err := json.Unmarshal(out, &entries); err != nil {
		t.Errorf("bpftool perf show: %v: %s", err, out)
		return -1
	}
	n := 0
	for _, e := range entries {
		if e.PID == os.Getpid() {
			n++
		}
	}
	return n
}

// Between windows nothing may be attached, in a window everything, and
// after Close nothing at all - whether it comes in a window or between.
func TestSampledDetachesBetweenWindows(t *testing.T) {
	testnet.NeedRoot(t)
	if _, err := exec.LookPath("bpftool"); err != nil {
		t.Skip("bpftool not installed")
	}
	for _, closeIn := range []string{"window", "gap"} {
		t.Run("close-in-"+closeIn, func(t *testing.T) {
			type seen struct {
				attached bool
				n        int
			}
			ch := make(chan seen, 8)
			report := func(attached bool) func() {
				return func() {
					select {
					case ch <- seen{attached, ourPerfBPF(t)}:
					default:
					}
				}
			}
			// The hooks run in the sampler and hold it up while bpftool
			// runs; the period leaves room for that.
			s, err := Start(context.Background(), Options{Sample: 0.2, Period: 500 * time.Millisecond,
				afterAttach: report(true), afterDetach: report(false)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			want := len(s.targets)
			if want < len(events)-2 {
				t.Fatalf("only %d tracepoints attached: %v", want, s.Events())
			}
			for i := 0; i < 4; i++ {
				x := <-ch
				if x.attached && x.n != want || !x.attached && x.n != 0 {
					t.Errorf("%s %d: bpftool shows %d programs of this process attached, want %d",
						map[bool]string{true: "window", false: "gap"}[x.attached], i/2+1, x.n, map[bool]int{true: want}[x.attached])
				}
			}
			// Close now in a window (the attach hook just ran) or in a gap.
			for x := <-ch; x.attached != (closeIn == "window"); x = <-ch {
			}
			progs, _ := sessionIDs(t, s)
			o, err := s.Total()
			if err != nil {
				t.Fatal(err)
			}
			if o.Sample == nil || o.Sample.AttachedSec <= 0 || o.Sample.AttachedSec >= o.DurationSec {
				t.Errorf("sample block %+v of %.2f s", o.Sample, o.DurationSec)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if n := ourPerfBPF(t); n != 0 {
				t.Errorf("bpftool shows %d programs of this process attached after Close", n)
			}
			assertGone(t, progs)
			if s.Close() != nil {
				t.Error("second Close failed")
			}
		})
	}
}

// TestRunCancelledDuringStart: a Ctrl-C that lands while observe is still
// attaching returns the (short) observation, not an error, and leaves
// nothing attached. Before, Start returned ctx's error with its links still
// open, and 'observe' exited 1 on an early Ctrl-C (seen as a flake of
// TestCommandDetachesOnInterrupt).
func TestRunCancelledDuringStart(t *testing.T) {
	testnet.NeedRoot(t)
	if _, err := exec.LookPath("bpftool"); err != nil {
		t.Skip("bpftool not installed")
	}
	for _, sample := range []float64{0, 0.2} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		o, err := Run(ctx, Options{Sample: sample, Period: 500 * time.Millisecond}, time.Minute)
		if err != nil || o == nil {
			t.Fatalf("sample %v: Run with a cancelled ctx: %v", sample, err)
		}
		if n := ourPerfBPF(t); n != 0 {
			t.Errorf("sample %v: %d of our programs still attached after Run returned", sample, n)
		}
	}
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

// progIDs returns the ids of the programs and links a session holds.
func sessionIDs(t *testing.T, s *Session) (progs []ebpf.ProgramID, links []uint32) {
	t.Helper()
	for _, c := range s.progs {
		for _, p := range c.Programs {
			info, err := p.Info()
			if err != nil {
				t.Fatal(err)
			}
			id, _ := info.ID()
			progs = append(progs, id)
		}
	}
	for _, l := range s.links {
		info, err := l.Info()
		if err != nil {
			t.Fatal(err)
		}
		links = append(links, uint32(info.ID))
	}
	return progs, links
}

func assertGone(t *testing.T, progs []ebpf.ProgramID) {
	t.Helper()
	for _, id := range progs {
		p, err := ebpf.NewProgramFromID(id)
		if err == nil {
			p.Close()
			t.Errorf("program id %d still loaded after Close", id)
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("program id %d: %v", id, err)
		}
	}
}

func TestBrokenTracepointsAreReported(t *testing.T) {
	testnet.NeedRoot(t)
	evs := append([]event(nil), events...)
	// A tracepoint this kernel does not have.
	evs = append(evs, event{"wirespeed_bogus", "no_such_event", "tp_napi_poll", [2][]want{}, true})
	// A layout that moved: pretend napi_poll's work field is elsewhere.
	for i := range evs {
		if evs[i].name == "napi_poll" {
			evs[i].fields = same([]want{{"napi", 8, 8}, {"dev_name", 16, 4}, {"work", 24, 4}, {"budget", 24, 4}})
		}
	}
	// A program the verifier rejects: netif_rx's reads past the context.
	breakProg := func(spec *ebpf.CollectionSpec) {
		spec.Programs["tp_netif_rx"].Instructions = asm.Instructions{
			asm.LoadMem(asm.R0, asm.R1, 4096, asm.DWord),
			asm.Return(),
		}
	}
	s, err := Start(context.Background(), Options{events: evs, mutateSpec: breakProg})
	if err != nil {
		t.Fatalf("Start failed instead of reporting: %v", err)
	}
	status := map[string]EventStatus{}
	for _, e := range s.Events() {
		status[e.Event] = e
	}
	for ev, want := range map[string]string{
		"wirespeed_bogus:no_such_event": "missing",
		"napi:napi_poll":                "format-mismatch",
		"net:netif_rx":                  "failed",
		"net:netif_receive_skb":         "attached",
	} {
		if got := status[ev]; got.Status != want {
			t.Errorf("%s: status %q (%s), want %q", ev, got.Status, got.Detail, want)
		}
	}
	if !strings.Contains(status["napi:napi_poll"].Detail, "work at offset 20") {
		t.Errorf("mismatch detail does not say what moved: %q", status["napi:napi_poll"].Detail)
	}
	o, err := s.Total()
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Notes) < 3 {
		t.Errorf("observation notes do not report the skipped tracepoints: %v", o.Notes)
	}
	progs, _ := sessionIDs(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, progs)

	// Nothing usable at all: a clear error, not a panic.
	_, err = Start(context.Background(), Options{events: []event{{"wirespeed_bogus", "none", "tp_napi_poll", [2][]want{}, false}}})
	if err == nil || !strings.Contains(err.Error(), "no tracepoint could be attached") {
		t.Errorf("Start with only a bogus tracepoint: err = %v", err)
	}
}

// TestCommandDetachesOnInterrupt runs the wirespeed binary, interrupts it and
// checks that the programs and links it held are gone.
func TestCommandDetachesOnInterrupt(t *testing.T) {
	testnet.NeedRoot(t)
	bin := filepath.Join(t.TempDir(), "wirespeed")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/wirespeed/wirespeed/cmd/wirespeed").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	for _, c := range []struct {
		sig  syscall.Signal
		args []string
	}{
		{syscall.SIGINT, []string{"--duration", "60"}},
		{0, []string{"--duration", "1"}},
		// Sampled: the links come and go; Ctrl-C may fall in a window or
		// between two.
		{syscall.SIGINT, []string{"--duration", "60", "--sample", "20%"}},
		{0, []string{"--duration", "2", "--sample", "20%"}},
	} {
		sig := c.sig
		sampled := len(c.args) > 2
		var out bytes.Buffer
		cmd := exec.Command(bin, append([]string{"observe", "--json"}, c.args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Every link seen: a sampled session makes new ones each window.
		var progs []uint64
		links := map[uint64]bool{}
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			p, l := fdIDs(cmd.Process.Pid)
			for _, id := range l {
				links[id] = true
			}
			if len(p) > 0 {
				progs = p
			}
			if len(links) >= len(events)-2 && (!sampled || len(progs) >= len(events)-2) {
				break
			}
		}
		if len(links) == 0 {
			t.Fatalf("no BPF links found in the fds of pid %d: %s", cmd.Process.Pid, out.String())
		}
		if sig != 0 {
			cmd.Process.Signal(sig)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("wirespeed observe %v (signal %v): %v: %s", c.args, sig, err, out.String())
		}
		if !strings.Contains(out.String(), `"schema": "wirespeed.observe/v1"`) {
			t.Errorf("no observation printed: %s", lastLines(out.String(), 5))
		}
		if sampled != strings.Contains(out.String(), `"attached_s":`) {
			t.Errorf("observe %v: sample block in the JSON %v, want %v", c.args, !sampled, sampled)
		}
		ids := make([]ebpf.ProgramID, len(progs))
		for i, p := range progs {
			ids[i] = ebpf.ProgramID(p)
		}
		assertGone(t, ids)
		bt, err := exec.Command("bpftool", "link", "show").CombinedOutput()
		if err == nil {
			for id := range links {
				if bytes.Contains(bt, []byte(fmt.Sprintf("\n%d: ", id))) || bytes.HasPrefix(bt, []byte(fmt.Sprintf("%d: ", id))) {
					t.Errorf("bpftool still lists link %d after exit", id)
				}
			}
		}
	}
}

// fdIDs reads prog_id and link_id from the fdinfo of a process's BPF fds.
func fdIDs(pid int) (progs, links []uint64) {
	infos, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fdinfo/*", pid))
	for _, p := range infos {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "link_id":
				links = append(links, n)
			case "prog_id":
				if !bytes.Contains(b, []byte("link_type")) {
					progs = append(progs, n)
				}
			}
		}
	}
	return progs, links
}
