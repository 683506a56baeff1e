// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/procfs"
)

func TestSummarizeLoad(t *testing.T) {
	mk := func(tm float64, user, sys, soft, idle, rx0, rx1 uint64, processed, squeeze uint64, napiTicks uint64, napiCPU int, rxBytes uint64) Sample {
		return Sample{T: tm,
			CPU: []procfs.CPUTimes{
				{CPU: 0, User: user, System: sys, SoftIRQ: soft, Idle: idle},
				{CPU: 1, User: user, System: sys, Idle: idle + soft},
			},
			NetRX:   []uint64{rx0, rx1},
			NetTX:   []uint64{0, 0},
			Softnet: []procfs.SoftnetCPU{{CPU: 0, Processed: processed, TimeSqueeze: squeeze}, {CPU: 1}},
			NAPI:    []ThreadSample{{PID: 77, Comm: "napi/ws-rcv-9", Ticks: napiTicks, CPU: napiCPU}},
			Devices: map[string]DevSample{"ns/ws-rcv": {RxBytes: rxBytes, BQL: []BQLSample{{Queue: "tx-0", Inflight: int64(rxBytes % 1000), Limit: 3000}}}},
		}
	}
	samples := []Sample{
		mk(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),            // ramp-up, outside the window
		mk(1, 10, 20, 30, 40, 100, 10, 1000, 1, 50, 0, 0), // window start
		mk(2, 20, 40, 90, 50, 300, 30, 3000, 3, 100, 1, 999),
		mk(3, 30, 60, 150, 60, 500, 50, 5000, 5, 150, 1, 125e6+0),
	}
	ls := SummarizeLoad(samples, 1, 3)
	if ls == nil {
		t.Fatal("no summary")
	}
	if ls.From != 1 || ls.To != 3 {
		t.Errorf("window %g-%g, want 1-3", ls.From, ls.To)
	}
	// CPU0 deltas: user 20, sys 40, soft 120, idle 20 -> total 200.
	c := ls.CPUs[0]
	for name, got := range map[string][2]float64{"user": {c.UserPct, 10}, "sys": {c.SysPct, 20}, "soft": {c.SoftPct, 60}, "idle": {c.IdlePct, 10}, "rx/s": {c.NetRXPerS, 200}} {
		if math.Abs(got[0]-got[1]) > 1e-9 {
			t.Errorf("cpu0 %s = %g, want %g", name, got[0], got[1])
		}
	}
	if ls.CPUs[1].SoftPct != 0 || ls.CPUs[1].NetRXPerS != 20 {
		t.Errorf("cpu1 = %+v", ls.CPUs[1])
	}
	if ls.Softnet.Processed != 4000 || ls.Softnet.TimeSqueeze != 4 {
		t.Errorf("softnet = %+v", ls.Softnet)
	}
	if len(ls.NAPI) != 1 || math.Abs(ls.NAPI[0].CPUPct-50) > 1e-9 || len(ls.NAPI[0].RanOn) != 2 {
		t.Errorf("napi = %+v, want 50%% on CPUs [0 1]", ls.NAPI)
	}
	d := ls.Devices["ns/ws-rcv"]
	if math.Abs(d.RxMbit-500) > 1e-9 || d.BQLMaxBytes != 999 || d.BQLLimit != 3000 {
		t.Errorf("device = %+v, want 500 Mbit/s, inflight max 999", d)
	}
	m := map[string]float64{}
	ls.Metrics(m)
	if m["cpu_softirq_busiest_pct"] != 60 || m["cpu_softirq_pct"] != 30 || m["softnet_squeeze_per_s"] != 2 || m["napi_threads_cpu_pct"] != 50 {
		t.Errorf("metrics = %v", m)
	}
	if SummarizeLoad(samples[:1], 0, 3) != nil {
		t.Error("one sample gave a summary")
	}
	// a starved sampler: two samples at the end of a 0-3 s load
	late := []Sample{mk(2.9, 10, 20, 30, 40, 100, 10, 1000, 1, 50, 0, 0), mk(3.0, 20, 40, 90, 50, 300, 30, 3000, 3, 100, 1, 999)}
	if SummarizeLoad(late, 0, 3) != nil {
		t.Error("samples spanning 0.1 s of a 3 s load gave a summary")
	}
}

func TestPhase(t *testing.T) {
	var rtts []RTT
	for i := 0; i < 10; i++ {
		rtts = append(rtts, RTT{T: -1 + float64(i)*0.05, Ms: 0.1}) // idle
	}
	for i := 1; i <= 100; i++ {
		rtts = append(rtts, RTT{T: 1 + float64(i)*0.01, Ms: float64(i)})
	}
	rtts = append(rtts, RTT{T: 1.5, Lost: true}, RTT{T: 9, Ms: 1000}) // lost; after the load
	idle := Phase(rtts, -2, 0)
	if idle.Sent != 10 || idle.P50Ms != 0.1 || idle.Lost != 0 {
		t.Errorf("idle = %+v", idle)
	}
	ld := Phase(rtts, 1, 3)
	if ld.Sent != 101 || ld.Lost != 1 || math.Abs(ld.LossPct-100.0/101) > 1e-9 {
		t.Errorf("loaded sent/lost = %+v", ld)
	}
	if ld.P50Ms != 50.5 || math.Abs(ld.P90Ms-90.1) > 1e-9 || math.Abs(ld.P99Ms-99.01) > 1e-9 || ld.MaxMs != 100 {
		t.Errorf("loaded percentiles = %+v", ld)
	}
	none := Phase(nil, 0, 1)
	if none.Sent != 0 || !math.IsNaN(none.P50Ms) {
		t.Errorf("empty phase = %+v", none)
	}
}

func synth(name string, mbit []float64, rtt []float64) *Result {
	r := &Result{Schema: Schema, Complete: true, Variants: []Variant{{Name: name}}}
	for i := range mbit {
		r.Runs = append(r.Runs, Run{Variant: name, Rep: i + 1, Metrics: map[string]float64{
			"send_mbit": mbit[i], "icmp_load_p50_ms": rtt[i], "cpu_softirq_pct": 40, "bad": math.NaN()}})
	}
	r.Summarize()
	return r
}

func TestCompareAndRoundTrip(t *testing.T) {
	// A GRO-off-like result against a GRO-on-like one: throughput clearly
	// higher, latency within noise, CPU identical.
	a := synth("nogro", []float64{8000, 8100, 7900, 8050}, []float64{0.30, 0.35, 0.28, 0.33})
	b := synth("gro", []float64{10900, 10800, 11000, 10950}, []float64{0.31, 0.29, 0.36, 0.30})
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := a.Save(pa); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(pb); err != nil {
		t.Fatal(err)
	}
	la, err := Load(pa)
	if err != nil {
		t.Fatal(err)
	}
	lb, _ := Load(pb)
	ds := Compare(la, "", lb, "")
	got := map[string]Delta{}
	for _, d := range ds {
		got[d.Metric] = d
	}
	if d := got["send_mbit"]; !d.Significant || d.Better != "b" || d.Welch.P > 1e-4 || math.Abs(d.DiffPct-36.19) > 0.01 {
		t.Errorf("send_mbit: %+v", d)
	}
	if d := got["icmp_load_p50_ms"]; d.Significant || d.Better != "" {
		t.Errorf("latency should not differ significantly: %+v", d)
	}
	if d := got["cpu_softirq_pct"]; d.Significant || d.Welch.P != 1 {
		t.Errorf("identical CPU: %+v", d)
	}
	if _, ok := got["bad"]; ok {
		t.Error("NaN metric survived the round trip")
	}
	// Worse is reported as worse: swap.
	if d := Compare(lb, "", la, "")[0]; d.Metric != "send_mbit" || d.Better != "a" {
		t.Errorf("swapped: %+v", d)
	}
	var sb strings.Builder
	WriteCompare(&sb, "a", "b", ds)
	if !strings.Contains(sb.String(), "B better") {
		t.Errorf("compare text lacks the verdict:\n%s", sb.String())
	}
	if _, err := Decode([]byte(`{"schema":"something/else"}`), "x"); err == nil {
		t.Error("foreign schema accepted")
	}
}

func TestParseNetDev(t *testing.T) {
	b := []byte(`Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
ws-rcv: 2837360984   48474    0    7    0     0          0         0   853748   12932    0    2    0     0       0          0
`)
	d, err := ParseNetDev(b, "ws-rcv")
	if err != nil {
		t.Fatal(err)
	}
	if d.RxBytes != 2837360984 || d.RxPackets != 48474 || d.RxDropped != 7 || d.TxBytes != 853748 || d.TxPackets != 12932 || d.TxDropped != 2 {
		t.Errorf("%+v", d)
	}
	if _, err := ParseNetDev(b, "eth0"); err == nil {
		t.Error("missing device: no error")
	}
}

// Interleaved variants of one run are compared pairwise by repetition: the
// noise both share (another job on the machine) cancels.
func TestComparePairedInterleaved(t *testing.T) {
	r := &Result{Schema: Schema, Variants: []Variant{{Name: "nogro"}, {Name: "gro"}}}
	nogro := []float64{3000, 9000, 4000, 6000}
	gro := []float64{3600, 10500, 4700, 7100}
	for i := range nogro {
		r.Runs = append(r.Runs,
			Run{Variant: "nogro", Rep: i + 1, Metrics: map[string]float64{"send_mbit": nogro[i]}},
			Run{Variant: "gro", Rep: i + 1, Metrics: map[string]float64{"send_mbit": gro[i]}})
	}
	d := Compare(r, "nogro", r, "gro")[0]
	if d.Welch == nil || d.Welch.P < 0.5 {
		t.Errorf("Welch = %+v, want p > 0.5 (the noise hides the difference)", d.Welch)
	}
	if d.Paired == nil || d.Paired.P > 0.05 || !d.Significant || d.Better != "b" {
		t.Errorf("paired = %+v, significant %v better %q: want p < 0.05, B better", d.Paired, d.Significant, d.Better)
	}
	// Two different files are never paired.
	r2 := *r
	if d := Compare(r, "nogro", &r2, "gro")[0]; d.Paired != nil || d.Significant {
		t.Errorf("two files: %+v", d)
	}
}

func TestAlignIntervals(t *testing.T) {
	cpu := func(soft, idle uint64) []procfs.CPUTimes {
		return []procfs.CPUTimes{{CPU: 0, SoftIRQ: soft, Idle: idle}, {CPU: 1, Idle: soft + idle}}
	}
	samples := []Sample{{T: 0, CPU: cpu(0, 0)}, {T: 0.51, CPU: cpu(10, 40)}, {T: 1.0, CPU: cpu(40, 60)}}
	ivs := []Interval{{LoadStart: 0, LoadEnd: 0.5}, {LoadStart: 0.5, LoadEnd: 1.0}, {LoadStart: 1.0, LoadEnd: 1.5}}
	AlignIntervals(ivs, samples)
	if !reflect.DeepEqual(ivs[0].SoftirqPct, []float64{20, 0}) || !reflect.DeepEqual(ivs[1].SoftirqPct, []float64{60, 0}) {
		t.Errorf("softirq per interval = %v, %v; want [20 0], [60 0]", ivs[0].SoftirqPct, ivs[1].SoftirqPct)
	}
	if ivs[2].SoftirqPct != nil {
		t.Errorf("interval without an end sample got %v", ivs[2].SoftirqPct)
	}
}

// TestDecodeNamesTheKind: a file of another wirespeed command, iperf3's own
// JSON or no JSON at all is named for what it is, with what to give instead
// - not with a Go unmarshal error.
func TestDecodeNamesTheKind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"schema":"wirespeed.doctor/v1","host":"h","findings":[]}`, "'wirespeed doctor --json' report"},
		{`{"schema":"wirespeed.inspect/v1","host":{"cpus":[]}}`, "'wirespeed inspect --json' snapshot"},
		{`{"start":{},"intervals":[],"end":{}}`, "iperf3's own -J output"},
		{`not json`, "not a JSON object"},
		{``, "not a JSON object"},
		{`{"schema":"wirespeed.bench/v9"}`, `schema "wirespeed.bench/v9"`},
	} {
		_, err := Decode([]byte(c.in), "f.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "wirespeed bench --out") || strings.Contains(err.Error(), "Go struct") {
			t.Errorf("%s: %v, want %q and what to give", c.in, err, c.want)
		}
	}
}

// A CPU busy in bursts between ticks (paced load) is charged few busy
// ticks: shares are of the wall time, not of the fields' sum. The figures
// are a real 3 Gbit/s run's CPU on this VM's 6.18 (3.01 s: 229 idle ticks,
// 7 busy ones).
func TestCPUSharesOfWallTime(t *testing.T) {
	x := procfs.CPUTimes{CPU: 1, Idle: 1000, SoftIRQ: 50, System: 20}
	y := procfs.CPUTimes{CPU: 1, Idle: 1229, SoftIRQ: 55, System: 22}
	c, ok := cpuShares(x, y, 3.01)
	if !ok {
		t.Fatal("no shares")
	}
	busy := 100 * (301.0 - 229) / 301
	for name, got := range map[string][2]float64{
		"idle": {c.IdlePct, 100 * 229.0 / 301}, "busy": {c.BusyPct, busy},
		"soft": {c.SoftPct, busy * 5 / 7}, "sys": {c.SysPct, busy * 2 / 7}, "user": {c.UserPct, 0},
	} {
		if math.Abs(got[0]-got[1]) > 1e-9 {
			t.Errorf("%s = %g, want %g", name, got[0], got[1])
		}
	}
	// Fully busy with a tick more than the wall time: shares of the ticks.
	y = procfs.CPUTimes{CPU: 1, Idle: 1000, SoftIRQ: 50 + 302, System: 20, Steal: 0}
	if c, _ = cpuShares(x, y, 3.01); c.SoftPct != 100 || c.IdlePct != 0 || c.BusyPct != 100 {
		t.Errorf("full load: %+v", c)
	}
}
