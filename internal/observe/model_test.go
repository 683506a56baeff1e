// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		gro, polls, direct, netifRx, delivered uint64
		want                                   datapath.Path
		mixed                                  bool
	}{
		{3000, 100, 0, 0, 100, PathNAPIGRO, false},
		{0, 0, 0, 1000, 1000, PathNetifRx, false},
		{0, 50, 500, 0, 500, PathNAPINoGRO, false},
		{0, 0, 500, 0, 500, PathDirect, false},
		{0, 50, 0, 0, 0, PathNAPINoGRO, false},
		{0, 0, 0, 0, 10, PathOther, false},
		{0, 0, 0, 0, 0, PathIdle, false},
		{600, 10, 0, 400, 450, PathNAPIGRO, true},
		{100, 10, 0, 900, 950, PathNetifRx, true},
		{1000, 10, 0, 5, 100, PathNAPIGRO, false}, // 0.5%: not worth a note
	} {
		got, note := Classify(c.gro, c.polls, c.direct, c.netifRx, c.delivered)
		if got != c.want || (note != "" && c.want != PathNAPINoGRO && c.want != PathOther) != c.mixed {
			t.Errorf("Classify(%d, %d, %d, %d, %d) = %q, %q; want %q, mixed %v",
				c.gro, c.polls, c.direct, c.netifRx, c.delivered, got, note, c.want, c.mixed)
		}
	}
}

func TestHistBins(t *testing.T) {
	var h [HistBins]uint64
	for i := range h {
		h[i] = uint64(i + 1)
	}
	bins := histBins(h, 64)
	if len(bins) != HistBins {
		t.Fatalf("%d bins: %+v", len(bins), bins)
	}
	want := []HistBin{{0, 0, 1}, {1, 4, 2}, {5, 8, 3}}
	if !reflect.DeepEqual(bins[:3], want) {
		t.Errorf("first bins %+v, want %+v", bins[:3], want)
	}
	if b := bins[16]; b != (HistBin{61, 64, 17}) {
		t.Errorf("bin 16 = %+v", b)
	}
	if b := bins[17]; b != (HistBin{65, 0, 18}) {
		t.Errorf("over-budget bin = %+v", b)
	}
	// The bins must agree with the BPF program's binning: 1 + (w-1)*16/budget.
	for _, budget := range []uint32{64, 300, 8, 1} {
		var hh [HistBins]uint64
		for i := 1; i < HistBins-1; i++ {
			hh[i] = 1
		}
		// Every work value 1..budget must land in the bin labelled for it.
		label := map[uint32]uint32{}
		for _, b := range histBins(hh, budget) {
			for w := b.Lo; w <= b.Hi; w++ {
				if _, dup := label[w]; dup {
					t.Errorf("budget %d: work %d in two bins", budget, w)
				}
				// Recover the bin index from the label's position.
				label[w] = 1 + (b.Lo-1)*16/budget
			}
		}
		for w := uint32(1); w <= budget; w++ {
			bpf := 1 + (w-1)*16/budget
			got, ok := label[w]
			if !ok || got != bpf {
				t.Errorf("budget %d: work %d labelled bin %d (found %v), BPF bin %d", budget, w, got, ok, bpf)
			}
		}
	}
}

func cpus2(a, b NAPIVal) []NAPIVal { return []NAPIVal{a, b} }

func testRaw() *Raw {
	hist := func(bin int, n uint64) (h [HistBins]uint64) { h[bin] = n; return }
	r := &Raw{NCPU: 2}
	r.NAPI = []RawNAPI{
		{Napi: 0x1000, Dev: "veth1", Ctx: CtxSoftirq, PerCPU: cpus2(
			NAPIVal{Polls: 300, Work: 3000, Full: 10, Hist: hist(3, 300), Budget: 64, MaxWork: 64}, NAPIVal{})},
		{Napi: 0x1000, Dev: "veth1", Ctx: CtxTask, PID: 42, PerCPU: cpus2(
			NAPIVal{}, NAPIVal{Polls: 100, Work: 1000, Full: 30, Hist: hist(16, 100), Budget: 64, MaxWork: 64})},
		{Napi: 0x2000, Dev: "eth0", Ctx: CtxSoftirq, PerCPU: cpus2(
			NAPIVal{Polls: 50, Work: 500, Hist: hist(3, 50), Budget: 64}, NAPIVal{})},
		{Napi: 0x3000, Dev: "idle0", Ctx: CtxSoftirq, PerCPU: cpus2(NAPIVal{}, NAPIVal{})},
	}
	cv := func(n, b uint64) []CountVal { return []CountVal{{n, b}, {0, 0}} }
	r.RX = []RawRX{
		{Dev: "veth1", NapiID: 9, Kind: RXGro, PerCPU: cv(4000, 4000*1448)},
		{Dev: "veth1", Kind: RXSkb, PerCPU: cv(100, 4000*1448)},
		{Dev: "usb0", Kind: RXNetifRx, PerCPU: cv(1000, 1000*1500)},
		{Dev: "usb0", Kind: RXSkb, PerCPU: cv(1000, 1000*1500)},
		{Dev: "eth0", NapiID: 7, Kind: RXSkbEntry, PerCPU: cv(500, 0)},
		{Dev: "eth0", Kind: RXSkb, PerCPU: cv(500, 0)},
	}
	r.Softirq = make([][NrVecs]TimeVal, 2)
	r.Softirq[0][VecNetRX] = TimeVal{1000, 250e6}
	r.Softirq[1][VecNetTX] = TimeVal{10, 1e6}
	r.IRQ = []RawIRQ{{IRQ: 30, PerCPU: []TimeVal{{5, 500}, {0, 0}}}, {IRQ: 31, PerCPU: []TimeVal{{1, 1}, {0, 0}}}}
	return r
}

func testMeta(filter ...string) Meta {
	return Meta{Duration: time.Second, Filter: filter,
		Comm:     func(pid uint32) string { return map[uint32]string{42: "napi/veth1-9"}[pid] },
		IRQNames: map[int]string{30: "xhci_hcd", 31: "virtio0-input.0"},
		DevIRQs:  map[string][]int{"usb0": {30}},
		Events:   []EventStatus{{Event: "napi:dql_stall_detected", Status: "attached"}}}
}

func TestBuild(t *testing.T) {
	o := Build(testRaw(), testMeta())
	byName := map[string]Device{}
	for _, d := range o.Devices {
		byName[d.Name] = d
	}
	if len(o.Devices) != 3 {
		t.Fatalf("devices %v, want eth0, usb0, veth1 (idle0 never polled with work)", byName)
	}
	v := byName["veth1"]
	if v.RXPath != PathNAPIGRO || v.GRORatio == nil || *v.GRORatio != 40 {
		t.Errorf("veth1: %q ratio %v", v.RXPath, v.GRORatio)
	}
	if !reflect.DeepEqual(v.NAPIIDs, []uint32{9}) || len(v.NAPIs) != 1 {
		t.Fatalf("veth1 NAPI ids %v, NAPIs %+v", v.NAPIIDs, v.NAPIs)
	}
	n := v.NAPIs[0]
	if n.Napi != "0x1000" || n.Polls != 400 || n.Work != 4000 || n.WorkPerPoll != 10 || n.FullBudget != 40 || n.FullShare != 0.1 {
		t.Errorf("veth1 NAPI %+v", n)
	}
	wantCtx := []PollContext{{Kind: "softirq", Polls: 300, Work: 3000, PollShare: 0.75},
		{Kind: "thread", PID: 42, Comm: "napi/veth1-9", Polls: 100, Work: 1000, PollShare: 0.25}}
	if !reflect.DeepEqual(n.Contexts, wantCtx) {
		t.Errorf("contexts %+v, want %+v", n.Contexts, wantCtx)
	}
	wantCPU := []NAPICPU{{0, 300, 3000, 0.75, 0.75}, {1, 100, 1000, 0.25, 0.25}}
	if !reflect.DeepEqual(n.CPUs, wantCPU) {
		t.Errorf("cpus %+v, want %+v", n.CPUs, wantCPU)
	}
	wantHist := []HistBin{{9, 12, 300}, {61, 64, 100}}
	if !reflect.DeepEqual(n.Hist, wantHist) {
		t.Errorf("hist %+v, want %+v", n.Hist, wantHist)
	}
	if u := byName["usb0"]; u.RXPath != PathNetifRx || u.GRORatio != nil || !reflect.DeepEqual(u.IRQs, []int{30}) {
		t.Errorf("usb0: %+v", u)
	}
	if e := byName["eth0"]; e.RXPath != PathNAPINoGRO {
		t.Errorf("eth0: %q", e.RXPath)
	}
	if len(o.CPUs) != 2 || o.CPUs[0].NetRXShare != 0.25 || o.CPUs[1].NetTXShare != 0.001 || o.CPUs[0].NetRX != 1000 {
		t.Errorf("cpus %+v", o.CPUs)
	}
	if len(o.IRQs) != 2 || o.IRQs[0].IRQ != 30 || o.IRQs[0].Count != 5 || o.IRQs[0].Devices[0] != "usb0" {
		t.Errorf("irqs %+v", o.IRQs)
	}
	if o.DQLStalls == nil {
		t.Error("dql stalls not reported although attached")
	}
}

func TestBuildFilter(t *testing.T) {
	o := Build(testRaw(), testMeta("usb0", "nosuch0"))
	if len(o.Devices) != 2 || o.Devices[0].Name != "nosuch0" || o.Devices[1].Name != "usb0" {
		t.Fatalf("devices %+v", o.Devices)
	}
	if o.Devices[0].RXPath != PathIdle {
		t.Errorf("nosuch0: %q", o.Devices[0].RXPath)
	}
	if len(o.IRQs) != 1 || o.IRQs[0].IRQ != 30 {
		t.Errorf("with a filter only the devices' IRQs: %+v", o.IRQs)
	}
	if o.DQLStalls == nil || o.Lost != 0 {
		t.Errorf("dql %v lost %d", o.DQLStalls, o.Lost)
	}
}

func TestDiff(t *testing.T) {
	prev := testRaw()
	cur := testRaw()
	cur.NAPI[0].PerCPU[0].Polls += 7
	cur.NAPI[0].PerCPU[0].Hist[3] += 7
	cur.RX[0].PerCPU[0].Count += 70
	cur.RX = append(cur.RX, RawRX{Dev: "new0", Kind: RXNetifRx, PerCPU: []CountVal{{3, 3}, {0, 0}}})
	cur.Softirq[0][VecNetRX].Ns += 1e6
	cur.IRQ[0].PerCPU[0].Count += 2
	cur.Lost[1] = 4
	d := Diff(cur, prev)
	if d.NAPI[0].PerCPU[0].Polls != 7 || d.NAPI[0].PerCPU[0].Hist[3] != 7 || d.NAPI[1].PerCPU[1].Polls != 0 {
		t.Errorf("napi diff %+v", d.NAPI[:2])
	}
	if d.NAPI[0].PerCPU[0].Budget != 64 {
		t.Error("budget is a level, not a counter: keep it")
	}
	if d.RX[0].PerCPU[0].Count != 70 || d.RX[len(d.RX)-1].PerCPU[0].Count != 3 {
		t.Errorf("rx diff %+v", d.RX)
	}
	if d.Softirq[0][VecNetRX] != (TimeVal{0, 1e6}) || d.IRQ[0].PerCPU[0].Count != 2 || d.Lost[1] != 4 {
		t.Errorf("softirq %+v irq %+v lost %v", d.Softirq[0], d.IRQ[0], d.Lost)
	}
	if Diff(cur, nil) != cur {
		t.Error("Diff against nothing is the totals")
	}
	o := Build(d, Meta{Duration: time.Second})
	for _, dev := range o.Devices {
		if dev.Name == "veth1" && (dev.GRORatio != nil || dev.GROSegments != 70) {
			t.Errorf("veth1 interval: %+v (no skbs delivered in the interval: no ratio)", dev)
		}
	}
	if math.Abs(o.CPUs[0].NetRXShare-0.001) > 1e-12 {
		t.Errorf("share %v", o.CPUs[0].NetRXShare)
	}
}

func TestLightModeEstimatesGROFromWork(t *testing.T) {
	r := testRaw()
	// Light mode: no per-segment events were counted.
	var rx []RawRX
	for _, x := range r.RX {
		if x.Kind != RXGro && x.Kind != RXSkbEntry {
			rx = append(rx, x)
		}
	}
	r.RX = rx
	m := testMeta()
	m.Light = true
	o := Build(r, m)
	by := map[string]Device{}
	for _, d := range o.Devices {
		by[d.Name] = d
	}
	v := by["veth1"] // 4000 work, 100 skbs delivered
	if v.RXPath != PathNAPIGRO || v.GRORatio == nil || *v.GRORatio != 40 || v.GROFrom == "napi_gro_receive_entry" {
		t.Errorf("veth1 light: %q ratio %v from %q", v.RXPath, v.GRORatio, v.GROFrom)
	}
	e := by["eth0"] // 500 work, 500 delivered: no coalescing
	if e.RXPath != PathNAPINoGRO || e.GRORatio == nil || *e.GRORatio != 1 {
		t.Errorf("eth0 light: %q ratio %v", e.RXPath, e.GRORatio)
	}
	if u := by["usb0"]; u.RXPath != PathNetifRx || u.GRORatio != nil {
		t.Errorf("usb0 light: %q ratio %v", u.RXPath, u.GRORatio)
	}
	// Without light mode the same counts give no ratio for veth1.
	m.Light = false
	for _, d := range Build(r, m).Devices {
		if d.Name == "veth1" && d.GRORatio != nil {
			t.Errorf("veth1 full mode without GRO events: ratio %v", *d.GRORatio)
		}
	}
}

func TestWriteText(t *testing.T) {
	var b strings.Builder
	m := testMeta()
	m.Events = append(m.Events, EventStatus{Event: "net:napi_gro_receive_entry", Status: "attached"})
	WriteText(&b, Build(testRaw(), m))
	out := b.String()
	for _, want := range []string{
		"2/2 tracepoints attached",
		"veth1  RX path: NAPI + GRO  GRO ratio 40.0 (4000 segments -> 100 skbs)",
		"usb0  RX path: netif_rx backlog (no NAPI, no GRO)",
		"ran in:  softirq 75.0%, thread napi/veth1-9[42] 25.0%",
		"CPUs:    cpu0 polls 75.0% work 75.0%, cpu1 polls 25.0% work 25.0%",
		"work/poll: 9-12:75.0% 61-64:25.0%",
		"full-budget polls 40 (10.0%)",
		"IRQs: [30]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBacklogNAPIs(t *testing.T) {
	r := testRaw()
	r.NAPI = append(r.NAPI, RawNAPI{Napi: 0x9000, Dev: BacklogDev, Ctx: CtxSoftirq,
		PerCPU: cpus2(NAPIVal{Polls: 10, Work: 20, Budget: 64}, NAPIVal{})})
	for _, c := range []struct {
		filter []string
		want   bool
	}{{nil, true}, {[]string{"usb0"}, true}, {[]string{"veth1"}, false}} {
		o := Build(r, testMeta(c.filter...))
		found := false
		for _, d := range o.Devices {
			if d.Name == BacklogDev {
				found = true
				if d.RXPath != PathBacklog || len(d.NAPIs) != 1 || d.NAPIs[0].Polls != 10 {
					t.Errorf("backlog device %+v", d)
				}
			}
		}
		if found != c.want {
			t.Errorf("filter %v: backlog shown %v, want %v (only with netif_rx devices)", c.filter, found, c.want)
		}
	}
}

// sampledMeta is testMeta for a 10 s window in which the programs were
// attached for 1 s (Options.Sample 0.1).
func sampledMeta() Meta {
	m := testMeta()
	m.Duration, m.Sample, m.Period, m.Attached = 10*time.Second, 0.1, time.Second, time.Second
	return m
}

// Sampled counts cover only the attached windows: rates and time shares
// must be taken over attached time, not the wall time of the observation,
// and come out as they would for the same counts observed continuously for
// that long.
func TestSampledRatesAndSharesUseAttachedTime(t *testing.T) {
	o := Build(testRaw(), sampledMeta())
	if o.DurationSec != 10 || o.Sample == nil || o.Sample.AttachedSec != 1 || o.Sample.Fraction != 0.1 || o.Sample.PeriodSec != 1 {
		t.Fatalf("duration %v sample %+v", o.DurationSec, o.Sample)
	}
	if c := o.CPUs[0]; c.NetRXShare != 0.25 || c.NetRX != 1000 {
		t.Errorf("cpu0 NET_RX share %v (want 250 ms of 1 s attached = 0.25, not of 10 s wall)", c.NetRXShare)
	}
	if c := o.CPUs[1]; c.NetTXShare != 0.001 {
		t.Errorf("cpu1 NET_TX share %v, want 0.001", c.NetTXShare)
	}
	var v Device
	for _, d := range o.Devices {
		if d.Name == "veth1" {
			v = d
		}
	}
	if v.GROSegmentsPerSec != 4000 || v.DeliveredPerSec != 100 || v.DeliveredBytesPerSec != 4000*1448 {
		t.Errorf("veth1 rates: segments %v skbs %v bytes %v per s", v.GROSegmentsPerSec, v.DeliveredPerSec, v.DeliveredBytesPerSec)
	}
	if v.GRORatio == nil || *v.GRORatio != 40 || len(v.NAPIs) != 1 {
		t.Fatalf("veth1 ratio %v NAPIs %d: ratios do not depend on time", v.GRORatio, len(v.NAPIs))
	}
	if n := v.NAPIs[0]; n.PollsPerSec != 400 || n.WorkPerSec != 4000 || n.FullShare != 0.1 || n.Contexts[0].PollShare != 0.75 {
		t.Errorf("veth1 NAPI: %v polls/s, %v work/s, full share %v, softirq share %v", n.PollsPerSec, n.WorkPerSec, n.FullShare, n.Contexts[0].PollShare)
	}
	if q := o.IRQs[0]; q.PerSec != 5 || q.Share != 500e-9 {
		t.Errorf("irq %d: %v/s, time share %v", q.IRQ, q.PerSec, q.Share)
	}

	// The same counts seen continuously for 1 s: the same report but for
	// the wall time and the sampling block.
	cont := testMeta()
	c := Build(testRaw(), cont)
	if c.Sample != nil {
		t.Errorf("continuous observation has a sample block: %+v", c.Sample)
	}
	if !reflect.DeepEqual(o.Devices, c.Devices) || !reflect.DeepEqual(o.CPUs, c.CPUs) || !reflect.DeepEqual(o.IRQs, c.IRQs) {
		t.Errorf("sampled 1 s of 10 differs from continuous 1 s:\n%+v\n%+v", o.Devices, c.Devices)
	}
	// And continuous for 10 s: rates and shares a tenth.
	cont.Duration = 10 * time.Second
	c = Build(testRaw(), cont)
	if c.CPUs[0].NetRXShare != 0.025 || c.Devices[2].NAPIs[0].PollsPerSec != 40 {
		t.Errorf("continuous 10 s: share %v, polls/s %v", c.CPUs[0].NetRXShare, c.Devices[2].NAPIs[0].PollsPerSec)
	}
}

// watch's intervals: the attached time of an interval is the difference of
// the cumulative attached times of its two reads.
func TestDiffAttachedPerInterval(t *testing.T) {
	prev, cur := testRaw(), testRaw()
	prev.Attached, cur.Attached = 700*time.Millisecond, 900*time.Millisecond
	cur.Softirq[0][VecNetRX].Ns += 50e6
	cur.NAPI[0].PerCPU[0].Polls += 100
	d := Diff(cur, prev)
	if d.Attached != 200*time.Millisecond {
		t.Fatalf("interval attached %v, want 200ms", d.Attached)
	}
	m := sampledMeta()
	m.Duration, m.Attached = time.Second, d.Attached
	o := Build(d, m)
	if math.Abs(o.CPUs[0].NetRXShare-0.25) > 1e-12 {
		t.Errorf("interval NET_RX share %v, want 50 ms of 200 ms attached", o.CPUs[0].NetRXShare)
	}
	for _, dev := range o.Devices {
		if dev.Name == "veth1" && math.Abs(dev.NAPIs[0].PollsPerSec-500) > 1e-9 {
			t.Errorf("interval polls/s %v, want 100 in 0.2 s", dev.NAPIs[0].PollsPerSec)
		}
	}
	// An interval no window fell in counts nothing and divides by nothing.
	m.Attached = 0
	z := Build(&Raw{NCPU: 2, Softirq: make([][NrVecs]TimeVal, 2)}, m)
	if z.CPUs[0].NetRXShare != 0 || len(z.Notes) == 0 || !strings.Contains(z.Notes[0], "no sampling window") {
		t.Errorf("empty interval: %+v notes %v", z.CPUs, z.Notes)
	}
}

func TestWriteTextSampled(t *testing.T) {
	var b strings.Builder
	WriteText(&b, Build(testRaw(), sampledMeta()))
	out := b.String()
	for _, want := range []string{
		"sampled: attached 10% of the time (1.00 s of 10.0 s; 100ms every 1s); counts are from those windows",
		"NAPI 0x1000: 400 polls (400/s)",
		"per second: delivered 100 skbs (46.34Mbit), into GRO 4000\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	WriteText(&b, Build(testRaw(), testMeta()))
	if strings.Contains(b.String(), "sampled") {
		t.Errorf("continuous output mentions sampling:\n%s", b.String())
	}
}

func TestCheckSample(t *testing.T) {
	for _, c := range []struct {
		sample float64
		period time.Duration
		ok     bool
	}{
		{0, 0, true}, {1, 0, true}, {0.1, 0, true}, {0.01, 0, true}, {0.2, 100 * time.Millisecond, true},
		{0.005, 0, false}, {0.05, 100 * time.Millisecond, false}, {-0.1, 0, false}, {1.5, 0, false},
		{math.NaN(), 0, false}, {0.5, -time.Second, false},
	} {
		if err := CheckSample(c.sample, c.period); (err == nil) != c.ok {
			t.Errorf("CheckSample(%v, %v) = %v, want ok %v", c.sample, c.period, err, c.ok)
		}
	}
}
