// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/lab"
)

func needLab(t *testing.T) Iperf3Version {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the host lab builds network namespaces (run: sudo go test ./internal/bench/)")
	}
	for _, tool := range []string{"ip", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	v, err := DetectIperf3(context.Background())
	if err != nil {
		t.Skipf("needs iperf3: %v", err)
	}
	return v
}

type fakeObserver struct {
	mu     sync.Mutex
	ifaces [][]string
}

func (f *fakeObserver) Start(ctx context.Context, ifaces []string) (func() (json.RawMessage, error), error) {
	f.mu.Lock()
	f.ifaces = append(f.ifaces, ifaces)
	f.mu.Unlock()
	return func() (json.RawMessage, error) { return json.RawMessage(`{"fake":true}`), nil }, nil
}

func labOptions(v Iperf3Version) Options {
	return Options{
		Streams: 2, Duration: 2 * time.Second, Omit: 500 * time.Millisecond, Direction: DirBoth,
		Repeat: 1, ProbeInterval: 50 * time.Millisecond, ProbePriority: -1, Idle: 500 * time.Millisecond,
		SampleInterval: 500 * time.Millisecond, Iperf3: v,
	}
}

// TestLabBench runs two short lab variants with load in both directions and
// checks the result has throughput each way, RTTs, CPU samples, and that
// the labs are gone afterwards.
func TestLabBench(t *testing.T) {
	v := needLab(t)
	o := labOptions(v)
	o.Variants = []Variant{
		{Name: "nogro", Lab: &lab.Config{SenderOffloadsOff: true}},
		{Name: "threaded", Lab: &lab.Config{GRO: true, Threaded: true, SenderOffloadsOff: true}},
	}
	obs := &fakeObserver{}
	o.Observer = obs
	var inspected []string
	o.Inspect = func(ctx context.Context, ns string, ifaces []string) (json.RawMessage, error) {
		// Read the receiver's state the way inspect does: inside the namespace.
		inspected = append(inspected, ns)
		gro, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "sh", "-c",
			"ethtool -k "+ifaces[0]+" | grep generic-receive-offload; cat /sys/class/net/"+ifaces[0]+"/threaded").Output()
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]string{"state": string(gro)})
	}
	res, err := Bench(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 2 {
		t.Fatalf("complete=%v (%s), %d runs", res.Complete, res.Incomplete, len(res.Runs))
	}
	if res.Iperf3.Processes < 1 || (!v.MultiThreaded() && res.Iperf3.Processes < 2) || res.Iperf3.Note == "" {
		t.Errorf("iperf3 info = %+v: with %s and 2 streams want 2 processes and a note", res.Iperf3, v)
	}
	for _, run := range res.Runs {
		t.Logf("%s: send %.0f receive %.0f Mbit/s, icmp loaded p50 %.3f ms", run.Variant, run.Metrics["send_mbit"], run.Metrics["receive_mbit"], run.Metrics["icmp_load_p50_ms"])
		if !run.Complete || run.Error != "" {
			t.Errorf("%s: complete=%v error=%q", run.Variant, run.Complete, run.Error)
		}
		for _, d := range []string{DirSend, DirReceive} {
			if !(run.Throughput[d].Mbit > 0) || !(run.Metrics[d+"_mbit"] > 0) {
				t.Errorf("%s: %s throughput %+v", run.Variant, d, run.Throughput[d])
			}
		}
		if len(run.Intervals) < 4 {
			t.Errorf("%s: %d intervals", run.Variant, len(run.Intervals))
		}
		aligned := 0
		for _, iv := range run.Intervals {
			if len(iv.SoftirqPct) > 0 {
				aligned++
			}
		}
		if aligned < len(run.Intervals)/2 {
			t.Errorf("%s: only %d of %d intervals have CPU samples at both ends", run.Variant, aligned, len(run.Intervals))
		}
		kinds := map[string]bool{}
		for _, p := range run.Probes {
			kinds[p.Kind] = true
			// As root both probe sockets (raw ICMP, UDP) take the
			// kernel's receive time; an ICMP raw socket read with
			// ReadMsgIP still parses (its IPv4 header is stripped).
			if p.RxTime != "kernel" {
				t.Errorf("%s %s probe: receive times from %q, want kernel", run.Variant, p.Kind, p.RxTime)
			}
			if p.Idle.Sent == 0 || p.Idle.Sent == p.Idle.Lost || p.Loaded.Sent == 0 || p.Loaded.Sent == p.Loaded.Lost {
				t.Errorf("%s %s probe: idle %+v loaded %+v", run.Variant, p.Kind, p.Idle, p.Loaded)
			}
		}
		if !kinds[ProbeICMP] || !kinds[ProbeUDP] {
			t.Errorf("%s: probes %v, want icmp and udp", run.Variant, kinds)
		}
		if len(run.Samples) < 3 || len(run.Samples[0].CPU) == 0 || len(run.Samples[0].Devices) != 2 {
			t.Errorf("%s: %d samples, first %+v", run.Variant, len(run.Samples), run.Samples[0])
		}
		if run.Load == nil || len(run.Load.CPUs) == 0 {
			t.Fatalf("%s: no load summary", run.Variant)
		}
		var busy float64
		for _, c := range run.Load.CPUs {
			busy += 100 - c.IdlePct
		}
		if busy <= 0 {
			t.Errorf("%s: CPUs idle during the load: %+v", run.Variant, run.Load.CPUs)
		}
		for k, dd := range run.Load.Devices {
			if dd.RxPackets == 0 || dd.TxPackets == 0 {
				t.Errorf("%s: device %s counters did not move: %+v", run.Variant, k, dd)
			}
		}
		// Only the lab's own napi kthread is followed: none without threaded NAPI.
		if th := run.Load.NAPI; (run.Variant == "threaded") != (len(th) == 1) || (len(th) == 1 && !strings.HasPrefix(th[0].Comm, "napi/ws-rcv-")) {
			t.Errorf("%s: napi threads %+v", run.Variant, th)
		}
		if string(run.Observe) != `{"fake":true}` {
			t.Errorf("%s: observe = %s", run.Variant, run.Observe)
		}
		for _, ns := range run.Namespaces {
			if lab.Exists(ns) {
				t.Errorf("namespace %s left behind", ns)
			}
		}
	}
	if len(obs.ifaces) != 2 || strings.Join(obs.ifaces[0], ",") != lab.SenderIfName+","+lab.ReceiverIfName {
		t.Errorf("observer saw %v", obs.ifaces)
	}
	// The knobs changed the device state, as read inside the namespaces.
	for variant, want := range map[string][]string{"nogro": {"generic-receive-offload: off", "\n0"}, "threaded": {"generic-receive-offload: on", "\n1"}} {
		raw := string(res.Inspect[variant+"/receiver"])
		for _, w := range want {
			if !strings.Contains(raw, strings.ReplaceAll(w, "\n", `\n`)) {
				t.Errorf("%s receiver state %s lacks %q", variant, raw, w)
			}
		}
	}
	if s := res.Summary; len(s) != 2 || s[0].Metrics["send_mbit"].N != 1 {
		t.Errorf("summary = %+v", s)
	}
	// It survives the round trip through a file.
	p := t.TempDir() + "/r.json"
	if err := res.Save(p); err != nil {
		t.Fatal(err)
	}
	if back, err := Load(p); err != nil || len(back.Runs) != 2 || len(back.Runs[1].Probes[0].RTTs) == 0 {
		t.Errorf("reload: %v", err)
	}
}

// TestLabBenchCancelled stops a bench during its load, as Ctrl-C does: the
// result is kept, marked incomplete, and the lab is gone.
func TestLabBenchCancelled(t *testing.T) {
	v := needLab(t)
	o := labOptions(v)
	o.Duration = 20 * time.Second
	o.Direction = DirSend
	o.Variants = []Variant{{Name: "lab", Lab: &lab.Config{}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Progress = func(p Progress) {
		if p.Phase == "load" && p.Elapsed >= time.Second {
			cancel()
		}
	}
	var checkpoints int
	o.Checkpoint = func(*Result) { checkpoints++ }
	res, err := Bench(ctx, o)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Complete || !strings.Contains(res.Incomplete, "interrupted") {
		t.Fatalf("result %+v, want incomplete", res)
	}
	if len(res.Runs) != 1 || res.Runs[0].Complete {
		t.Fatalf("runs: %+v", res.Runs)
	}
	run := res.Runs[0]
	if !(run.Throughput[DirSend].Mbit > 0) || run.Throughput[DirSend].Source != "intervals" {
		t.Errorf("partial throughput = %+v, want > 0 from the intervals", run.Throughput[DirSend])
	}
	if checkpoints != 2 {
		t.Errorf("%d checkpoints, want 2 (at the start and after the run)", checkpoints)
	}
	for _, ns := range run.Namespaces {
		if lab.Exists(ns) {
			t.Errorf("namespace %s left behind after cancel", ns)
		}
	}
	labs, _ := lab.List()
	for _, in := range labs {
		if in.Owner == os.Getpid() {
			t.Errorf("lab %s of this process still exists", in.Namespace)
		}
	}
}

func TestCheckServerNamesAddress(t *testing.T) {
	// Nothing listens on port 1 of the loopback: refused at once.
	err := CheckServer(context.Background(), netip.MustParseAddrPort("127.0.0.1:1"), 3*time.Second)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "iperf3 -s") {
		t.Errorf("err = %v", err)
	}
}

func TestDetectIperf3Missing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := DetectIperf3(context.Background())
	if !errors.Is(err, ErrNoIperf3) || !strings.Contains(err.Error(), "apt-get install iperf3") {
		t.Errorf("err = %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	good := labOptions(Iperf3Version{Major: 3, Minor: 12})
	good.Variants = []Variant{{Name: "a", Lab: &lab.Config{}}}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	capped := good
	capped.RateMbit = maxRateMbit
	if err := capped.Validate(); err != nil {
		t.Errorf("rate at the ceiling: %v", err)
	}
	for name, mut := range map[string]func(*Options){
		"duration":  func(o *Options) { o.Duration = 1700 * time.Millisecond },
		"short":     func(o *Options) { o.Duration = 0 },
		"direction": func(o *Options) { o.Direction = "up" },
		"streams":   func(o *Options) { o.Streams = 0 },
		"interval":  func(o *Options) { o.ProbeInterval = 5 * time.Millisecond },
		"tos":       func(o *Options) { o.ProbeTOS = 256 },
		"rate":      func(o *Options) { o.RateMbit = -5 },
		"rateNaN":   func(o *Options) { o.RateMbit = math.NaN() },
		"rateHuge":  func(o *Options) { o.RateMbit = maxRateMbit * 2 },
		"rateInf":   func(o *Options) { o.RateMbit = math.Inf(1) },
		"variant":   func(o *Options) { o.Variants = []Variant{{Name: "x", Lab: &lab.Config{Threaded: true}}} },
		"dupe":      func(o *Options) { o.Variants = append(o.Variants, o.Variants[0]) },
		"peer":      func(o *Options) { o.Peer = "198.18.0.1:99999" },
		"peer6":     func(o *Options) { o.Peer = "2001:db8::1" },
	} {
		o := good
		o.Variants = append([]Variant(nil), good.Variants...)
		mut(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLabBrokenMidRun: the lab's receiver namespace is deleted under the
// load (as 'lab down --all' from another shell would): the result is not
// complete and Bench returns an error, whatever figures the run kept.
func TestLabBrokenMidRun(t *testing.T) {
	v := needLab(t)
	o := labOptions(v)
	o.Duration = 4 * time.Second
	o.Direction = DirSend
	o.Variants = []Variant{{Name: "lab", Lab: &lab.Config{}}}
	var once sync.Once
	o.Progress = func(p Progress) {
		if p.Phase == "load" && p.Elapsed >= time.Second {
			once.Do(func() {
				labs, _ := lab.List()
				for _, in := range labs {
					if in.Owner == os.Getpid() && strings.HasSuffix(in.Namespace, "-r") {
						exec.Command("ip", "netns", "del", in.Namespace).Run()
					}
				}
			})
		}
	}
	res, err := Bench(context.Background(), o)
	if err == nil || res == nil || res.Complete || res.Incomplete == "" {
		t.Fatalf("a bench whose lab was removed mid-run: err %v, result complete=%v %q", err, res != nil && res.Complete, func() string {
			if res == nil {
				return ""
			}
			return res.Incomplete
		}())
	}
	if len(res.Runs) != 1 || res.Runs[0].Complete {
		t.Errorf("the broken run is marked complete: %+v", res.Runs)
	}
	t.Logf("incomplete: %s", res.Incomplete)
}
