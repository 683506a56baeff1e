// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"sort"

	"github.com/wirespeed/wirespeed/internal/procfs"
)

// clockTicks is USER_HZ, the unit of /proc/stat and /proc/PID/stat times
// (100 on every Linux architecture wirespeed targets).
const clockTicks = 100

// LoadSummary says where the CPU went between two samples (the loaded
// window: after the omitted seconds until the load ended).
type LoadSummary struct {
	From    float64             `json:"from_s"`
	To      float64             `json:"to_s"`
	CPUs    []CPULoad           `json:"cpus"`
	Softnet SoftnetDelta        `json:"softnet"`
	IRQs    map[string][]uint64 `json:"irqs,omitempty"` // per device IRQ, delta per CPU
	NAPI    []ThreadLoad        `json:"napi_threads,omitempty"`
	Devices map[string]DevDelta `json:"devices,omitempty"`
}

// CPULoad is one CPU's share of time (percent) and softirq rates.
type CPULoad struct {
	CPU      int     `json:"cpu"`
	UserPct  float64 `json:"user_pct"` // user + nice
	SysPct   float64 `json:"sys_pct"`
	IRQPct   float64 `json:"irq_pct"`
	SoftPct  float64 `json:"softirq_pct"`
	IdlePct  float64 `json:"idle_pct"` // idle + iowait
	StealPct float64 `json:"steal_pct,omitempty"`
	// BusyPct is what was neither idle, iowait nor steal; the four
	// shares above split it by /proc/stat's ticks (see cpuShares) and
	// are all 0 when no tick fell on busy time.
	BusyPct   float64 `json:"busy_pct"`
	NetRXPerS float64 `json:"net_rx_per_s"`
	NetTXPerS float64 `json:"net_tx_per_s"`
}

// SoftnetDelta sums softnet_stat deltas over all CPUs (and per CPU).
type SoftnetDelta struct {
	Processed   uint64        `json:"processed"`
	Dropped     uint64        `json:"dropped"`
	TimeSqueeze uint64        `json:"time_squeeze"`
	ReceivedRPS uint64        `json:"received_rps"`
	PerCPU      []SoftnetCPUD `json:"per_cpu"`
}

// SoftnetCPUD is one CPU's softnet delta.
type SoftnetCPUD struct {
	CPU         int    `json:"cpu"`
	Processed   uint64 `json:"processed"`
	Dropped     uint64 `json:"dropped"`
	TimeSqueeze uint64 `json:"time_squeeze"`
	ReceivedRPS uint64 `json:"received_rps"`
}

// ThreadLoad is a napi kthread's CPU use in the window.
type ThreadLoad struct {
	Comm   string  `json:"comm"`
	PID    int     `json:"pid"`
	CPUPct float64 `json:"cpu_pct"` // of one CPU
	RanOn  []int   `json:"ran_on"`  // CPUs it was seen on at sample times
}

// DevDelta is a device's counter deltas and BQL peaks in the window.
type DevDelta struct {
	RxMbit      float64 `json:"rx_mbit"`
	TxMbit      float64 `json:"tx_mbit"`
	RxPackets   uint64  `json:"rx_packets"`
	TxPackets   uint64  `json:"tx_packets"`
	RxDropped   uint64  `json:"rx_dropped"`
	TxDropped   uint64  `json:"tx_dropped"`
	BQLMaxBytes int64   `json:"bql_inflight_max,omitempty"`
	BQLLimit    int64   `json:"bql_limit,omitempty"`
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0 // counter reset
	}
	return a - b
}

// cpuShares is one CPU's shares of the wall time dt (seconds) between two
// /proc/stat readings x and y. The kernel keeps idle and iowait time
// exactly (nohz idle accounting), but unless it is built with
// VIRT_CPU_ACCOUNTING_GEN or IRQ_TIME_ACCOUNTING it charges user, system,
// irq and softirq time one whole tick at a time to whatever runs when the
// tick fires. A CPU busy in bursts shorter than a tick - paced load below
// the link's rate - is then charged far fewer busy ticks than it was busy:
// the fields sum to less than the wall time (on this VM's 6.18, 7 busy
// ticks of 301 at a 3 Gbit/s cap, with 229 idle), and shares of their sum
// would call a quarter-busy CPU 3% busy. So shares are of the wall time
// (or of the fields' sum where that is larger), busy is what is not idle,
// iowait or steal, and the ticks only split it among user, system, irq and
// softirq.
func cpuShares(x, y procfs.CPUTimes, dt float64) (CPULoad, bool) {
	ticks := map[string]float64{
		"user": float64(sub(y.User, x.User) + sub(y.Nice, x.Nice)),
		"sys":  float64(sub(y.System, x.System)),
		"irq":  float64(sub(y.IRQ, x.IRQ)),
		"soft": float64(sub(y.SoftIRQ, x.SoftIRQ)),
	}
	idle := float64(sub(y.Idle, x.Idle) + sub(y.IOWait, x.IOWait))
	steal := float64(sub(y.Steal, x.Steal))
	tot := max(float64(sub(y.Total(), x.Total())), dt*clockTicks)
	if tot == 0 {
		return CPULoad{}, false
	}
	busy := max(tot-idle-steal, 0)
	charged := ticks["user"] + ticks["sys"] + ticks["irq"] + ticks["soft"]
	share := func(k string) float64 {
		if charged == 0 {
			return 0
		}
		return 100 * busy / tot * ticks[k] / charged
	}
	return CPULoad{CPU: y.CPU, UserPct: share("user"), SysPct: share("sys"), IRQPct: share("irq"),
		SoftPct: share("soft"), IdlePct: 100 * idle / tot, StealPct: 100 * steal / tot,
		BusyPct: 100 * busy / tot}, true
}

// Summarize computes the load between the first sample at or after from and
// the last sample at or before to. It returns nil with fewer than two, and
// when the samples span less than half of from..to: a sampler that was
// starved (seen in a loaded VM guest: two samples 18 ms apart at the end of
// an 8 s load) measured some other moment, not the load.
func SummarizeLoad(samples []Sample, from, to float64) *LoadSummary {
	var win []Sample
	for _, s := range samples {
		if s.T >= from-0.05 && s.T <= to+0.25 {
			win = append(win, s)
		}
	}
	if len(win) < 2 {
		return nil
	}
	a, b := win[0], win[len(win)-1]
	dt := b.T - a.T
	if dt <= 0 || dt < (to-from)/2 {
		return nil
	}
	return &LoadSummary{From: a.T, To: b.T, CPUs: cpuLoads(a, b, dt), Softnet: softnetDelta(a, b),
		IRQs: irqDeltas(a, b), NAPI: napiLoads(win, dt), Devices: devDeltas(win, dt)}
}

// cpuLoads is each CPU's shares and NET_RX/NET_TX softirq rates between
// samples a and b, dt seconds apart.
func cpuLoads(a, b Sample, dt float64) []CPULoad {
	var out []CPULoad
	for i := range b.CPU {
		if i >= len(a.CPU) {
			break
		}
		c, ok := cpuShares(a.CPU[i], b.CPU[i], dt)
		if !ok {
			continue
		}
		if i < len(a.NetRX) && i < len(b.NetRX) {
			c.NetRXPerS = float64(sub(b.NetRX[i], a.NetRX[i])) / dt
		}
		if i < len(a.NetTX) && i < len(b.NetTX) {
			c.NetTXPerS = float64(sub(b.NetTX[i], a.NetTX[i])) / dt
		}
		out = append(out, c)
	}
	return out
}

// softnetDelta is the softnet_stat deltas per CPU present in both samples,
// and their sums.
func softnetDelta(a, b Sample) SoftnetDelta {
	var sd SoftnetDelta
	prev := map[int]int{}
	for i, s := range a.Softnet {
		prev[s.CPU] = i
	}
	for _, y := range b.Softnet {
		i, ok := prev[y.CPU]
		if !ok {
			continue
		}
		x := a.Softnet[i]
		d := SoftnetCPUD{CPU: y.CPU, Processed: sub(y.Processed, x.Processed), Dropped: sub(y.Dropped, x.Dropped),
			TimeSqueeze: sub(y.TimeSqueeze, x.TimeSqueeze), ReceivedRPS: sub(y.ReceivedRPS, x.ReceivedRPS)}
		sd.PerCPU = append(sd.PerCPU, d)
		sd.Processed += d.Processed
		sd.Dropped += d.Dropped
		sd.TimeSqueeze += d.TimeSqueeze
		sd.ReceivedRPS += d.ReceivedRPS
	}
	return sd
}

// irqDeltas is each device IRQ's per-CPU count delta (nil when none has
// the same CPUs in both samples).
func irqDeltas(a, b Sample) map[string][]uint64 {
	var out map[string][]uint64
	for irq, cb := range b.IRQs {
		ca := a.IRQs[irq]
		if len(ca) != len(cb) {
			continue
		}
		if out == nil {
			out = map[string][]uint64{}
		}
		d := make([]uint64, len(cb))
		for i := range cb {
			d[i] = sub(cb[i], ca[i])
		}
		out[irq] = d
	}
	return out
}

// napiLoads is each napi kthread's CPU use between the window's first and
// last samples, and the CPUs it was seen on at any sample of the window.
func napiLoads(win []Sample, dt float64) []ThreadLoad {
	a, b := win[0], win[len(win)-1]
	first := map[int]ThreadSample{}
	for _, t := range a.NAPI {
		first[t.PID] = t
	}
	ranOn := map[int]map[int]bool{}
	for _, s := range win {
		for _, t := range s.NAPI {
			if ranOn[t.PID] == nil {
				ranOn[t.PID] = map[int]bool{}
			}
			ranOn[t.PID][t.CPU] = true
		}
	}
	var out []ThreadLoad
	for _, t := range b.NAPI {
		f, ok := first[t.PID]
		if !ok {
			continue
		}
		tl := ThreadLoad{Comm: t.Comm, PID: t.PID, CPUPct: 100 * float64(sub(t.Ticks, f.Ticks)) / clockTicks / dt}
		for c := range ranOn[t.PID] {
			tl.RanOn = append(tl.RanOn, c)
		}
		sort.Ints(tl.RanOn)
		out = append(out, tl)
	}
	return out
}

// devDeltas is each device's counter deltas between the window's first and
// last samples and its BQL peaks over all of them (nil when no device is
// in both).
func devDeltas(win []Sample, dt float64) map[string]DevDelta {
	a, b := win[0], win[len(win)-1]
	var out map[string]DevDelta
	for dev, y := range b.Devices {
		x, ok := a.Devices[dev]
		if !ok {
			continue
		}
		d := DevDelta{
			RxMbit: float64(sub(y.RxBytes, x.RxBytes)) * 8 / 1e6 / dt, TxMbit: float64(sub(y.TxBytes, x.TxBytes)) * 8 / 1e6 / dt,
			RxPackets: sub(y.RxPackets, x.RxPackets), TxPackets: sub(y.TxPackets, x.TxPackets),
			RxDropped: sub(y.RxDropped, x.RxDropped), TxDropped: sub(y.TxDropped, x.TxDropped),
		}
		for _, s := range win {
			for _, q := range s.Devices[dev].BQL {
				if q.Inflight > d.BQLMaxBytes {
					d.BQLMaxBytes = q.Inflight
				}
				if q.Limit > d.BQLLimit {
					d.BQLLimit = q.Limit
				}
			}
		}
		if out == nil {
			out = map[string]DevDelta{}
		}
		out[dev] = d
	}
	return out
}

// Metrics adds the load's flat metrics: the busiest CPU's softirq share, the
// mean softirq/sys/idle share, softnet drops and squeezes, napi thread CPU.
func (ls *LoadSummary) Metrics(m map[string]float64) {
	if ls == nil || len(ls.CPUs) == 0 {
		return
	}
	var soft, sys, idle, busiest, rx float64
	for _, c := range ls.CPUs {
		soft += c.SoftPct
		sys += c.SysPct
		idle += c.IdlePct
		rx += c.NetRXPerS
		if c.SoftPct > busiest {
			busiest = c.SoftPct
		}
	}
	n := float64(len(ls.CPUs))
	m["cpu_softirq_pct"] = soft / n
	m["cpu_softirq_busiest_pct"] = busiest
	m["cpu_sys_pct"] = sys / n
	m["cpu_idle_pct"] = idle / n
	m["net_rx_softirqs_per_s"] = rx
	dt := ls.To - ls.From
	if dt > 0 {
		m["softnet_dropped_per_s"] = float64(ls.Softnet.Dropped) / dt
		m["softnet_squeeze_per_s"] = float64(ls.Softnet.TimeSqueeze) / dt
	}
	if len(ls.Devices) > 0 && dt > 0 {
		var drops uint64
		for _, d := range ls.Devices {
			drops += d.RxDropped + d.TxDropped
		}
		m["dev_dropped_per_s"] = float64(drops) / dt
	}
	if len(ls.NAPI) > 0 {
		var t float64
		for _, th := range ls.NAPI {
			t += th.CPUPct
		}
		m["napi_threads_cpu_pct"] = t
	}
}

// AlignIntervals fills each interval's per-CPU softirq share from the
// samples taken at (within a quarter of a second of) its start and end on
// the load clock; the sampler and iperf3 both tick every 0.5 s from the load
// start, so the samples bracket the intervals.
func AlignIntervals(ivs []Interval, samples []Sample) {
	nearest := func(t float64) *Sample {
		var best *Sample
		for i := range samples {
			d := samples[i].T - t
			if d < 0 {
				d = -d
			}
			if d <= 0.25 && (best == nil || d < abs(best.T-t)) {
				best = &samples[i]
			}
		}
		return best
	}
	for i := range ivs {
		a, b := nearest(ivs[i].LoadStart), nearest(ivs[i].LoadEnd)
		if a == nil || b == nil || a == b || len(a.CPU) != len(b.CPU) {
			continue
		}
		out := make([]float64, len(b.CPU))
		for c := range b.CPU {
			tot := float64(sub(b.CPU[c].Total(), a.CPU[c].Total()))
			if tot > 0 {
				out[c] = 100 * float64(sub(b.CPU[c].SoftIRQ, a.CPU[c].SoftIRQ)) / tot
			}
		}
		ivs[i].SoftirqPct = out
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
