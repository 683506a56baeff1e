// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

// Sample is one reading of the host's counters (cumulative values; deltas
// are computed by the summaries). T is seconds since the load started.
type Sample struct {
	T       float64              `json:"t"`
	CPU     []procfs.CPUTimes    `json:"cpu"`               // per CPU, ticks
	NetRX   []uint64             `json:"net_rx"`            // NET_RX softirqs per CPU
	NetTX   []uint64             `json:"net_tx"`            // NET_TX softirqs per CPU
	Softnet []procfs.SoftnetCPU  `json:"softnet"`           // per CPU
	IRQs    map[string][]uint64  `json:"irqs,omitempty"`    // device IRQ -> count per CPU
	NAPI    []ThreadSample       `json:"napi,omitempty"`    // napi/* kthreads
	Devices map[string]DevSample `json:"devices,omitempty"` // key: device ("ns/dev" in the lab)
	Errors  []string             `json:"errors,omitempty"`
}

// ThreadSample is a kthread's cumulative CPU time and the CPU it last ran on.
type ThreadSample struct {
	PID   int    `json:"pid"`
	Comm  string `json:"comm"`
	Ticks uint64 `json:"ticks"` // utime + stime
	CPU   int    `json:"cpu"`
}

// DevSample holds a device's counters.
type DevSample struct {
	RxBytes   uint64      `json:"rx_bytes"`
	RxPackets uint64      `json:"rx_packets"`
	RxDropped uint64      `json:"rx_dropped"`
	TxBytes   uint64      `json:"tx_bytes"`
	TxPackets uint64      `json:"tx_packets"`
	TxDropped uint64      `json:"tx_dropped"`
	BQL       []BQLSample `json:"bql,omitempty"`
}

// BQLSample is one TX queue's byte_queue_limits state.
type BQLSample struct {
	Queue    string `json:"queue"`
	Inflight int64  `json:"inflight"`
	Limit    int64  `json:"limit"`
}

// DeviceSource reads one device's counters.
type DeviceSource struct {
	Key  string                    // name in Sample.Devices
	Read func() (DevSample, error) // nil = not readable
}

// Sampler reads the host every Interval until stopped.
type Sampler struct {
	FS       *hostfs.FS
	Interval time.Duration
	IRQs     []int // device IRQ numbers to follow
	Devices  []DeviceSource
	// NAPIPIDs, when not nil, are the only napi kthreads to follow (the lab's
	// devices'); nil follows every napi/* kthread of the host.
	NAPIPIDs []int

	mu       sync.Mutex
	samples  []Sample
	napiPIDs []int
	napiScan time.Time
	stop     chan struct{}
	done     chan struct{}
}

// Start samples at zero (now) and then every Interval.
func (s *Sampler) Start(zero time.Time) {
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.Interval)
		defer t.Stop()
		for {
			sm := s.Read(time.Since(zero).Seconds())
			s.mu.Lock()
			s.samples = append(s.samples, sm)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// Stop takes a last sample and returns them all.
func (s *Sampler) Stop(zero time.Time) []Sample {
	if s.stop == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	last := s.Read(time.Since(zero).Seconds())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, last)
	s.stop = nil
	return s.samples
}

// Read takes one sample.
func (s *Sampler) Read(t float64) Sample {
	fs := s.FS
	sm := Sample{T: t}
	fail := func(what string, err error) { sm.Errors = append(sm.Errors, fmt.Sprintf("%s: %v", what, err)) }
	if b, err := fs.ReadFile("/proc/stat"); err != nil {
		fail("/proc/stat", err)
	} else if cpus, err := procfs.ParseStat(b); err != nil {
		fail("/proc/stat", err)
	} else {
		for _, c := range cpus {
			if c.CPU >= 0 {
				sm.CPU = append(sm.CPU, c)
			}
		}
	}
	if b, err := fs.ReadFile("/proc/softirqs"); err != nil {
		fail("/proc/softirqs", err)
	} else if si, err := procfs.ParseSoftirqs(b); err != nil {
		fail("/proc/softirqs", err)
	} else {
		sm.NetRX, sm.NetTX = si.Counts["NET_RX"], si.Counts["NET_TX"]
	}
	if b, err := fs.ReadFile("/proc/net/softnet_stat"); err != nil {
		fail("softnet_stat", err)
	} else if sn, err := procfs.ParseSoftnetStat(b); err != nil {
		fail("softnet_stat", err)
	} else {
		sm.Softnet = sn
	}
	if len(s.IRQs) > 0 {
		if b, err := fs.ReadFile("/proc/interrupts"); err != nil {
			fail("/proc/interrupts", err)
		} else if in, err := procfs.ParseInterrupts(b); err != nil {
			fail("/proc/interrupts", err)
		} else {
			sm.IRQs = map[string][]uint64{}
			for _, n := range s.IRQs {
				if l := in.Find(n); l != nil {
					sm.IRQs[strconv.Itoa(n)] = l.Counts
				}
			}
		}
	}
	sm.NAPI = s.readNAPI()
	for _, d := range s.Devices {
		if d.Read == nil {
			continue
		}
		ds, err := d.Read()
		if err != nil {
			fail(d.Key, err)
			continue
		}
		if sm.Devices == nil {
			sm.Devices = map[string]DevSample{}
		}
		sm.Devices[d.Key] = ds
	}
	return sm
}

// readNAPI reads the napi/* kthreads. They are children of kthreadd (pid 2);
// the list is rescanned every 2 s, their stat every sample.
func (s *Sampler) readNAPI() []ThreadSample {
	fs := s.FS
	if s.NAPIPIDs != nil {
		s.napiPIDs = s.NAPIPIDs
	} else if time.Since(s.napiScan) > 2*time.Second {
		s.napiScan = time.Now()
		s.napiPIDs = nil
		b, err := fs.ReadFile("/proc/2/task/2/children")
		if err == nil {
			for _, f := range strings.Fields(string(b)) {
				c, err := fs.ReadString("/proc/" + f + "/comm")
				if err == nil && strings.HasPrefix(strings.TrimSpace(c), "napi/") {
					if pid, err := strconv.Atoi(f); err == nil {
						s.napiPIDs = append(s.napiPIDs, pid)
					}
				}
			}
		}
	}
	var out []ThreadSample
	for _, pid := range s.napiPIDs {
		b, err := fs.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		ps, err := procfs.ParsePidStat(b)
		if err != nil {
			continue
		}
		out = append(out, ThreadSample{PID: pid, Comm: ps.Comm, Ticks: ps.UTime + ps.STime, CPU: ps.Processor})
	}
	return out
}

// SysfsDevice reads a device's counters and BQL state from sysfs (the host's
// own devices; lab devices use NetDevReader).
func SysfsDevice(fs *hostfs.FS, dev string) func() (DevSample, error) {
	return func() (DevSample, error) {
		var d DevSample
		base := "/sys/class/net/" + dev
		for _, f := range []struct {
			name string
			dst  *uint64
		}{
			{"rx_bytes", &d.RxBytes}, {"rx_packets", &d.RxPackets}, {"rx_dropped", &d.RxDropped},
			{"tx_bytes", &d.TxBytes}, {"tx_packets", &d.TxPackets}, {"tx_dropped", &d.TxDropped},
		} {
			s, err := fs.ReadString(base + "/statistics/" + f.name)
			if err != nil {
				return d, fmt.Errorf("device %s: %w", dev, err)
			}
			*f.dst, _ = strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		}
		qs, _ := fs.ReadDir(base + "/queues")
		sort.Strings(qs)
		for _, q := range qs {
			if !strings.HasPrefix(q, "tx-") {
				continue
			}
			dir := base + "/queues/" + q + "/byte_queue_limits/"
			in, err1 := fs.ReadString(dir + "inflight")
			li, err2 := fs.ReadString(dir + "limit")
			if err1 != nil || err2 != nil {
				continue
			}
			b := BQLSample{Queue: q}
			b.Inflight, _ = strconv.ParseInt(strings.TrimSpace(in), 10, 64)
			b.Limit, _ = strconv.ParseInt(strings.TrimSpace(li), 10, 64)
			d.BQL = append(d.BQL, b)
		}
		return d, nil
	}
}

// ParseNetDev extracts one device's counters from /proc/net/dev.
func ParseNetDev(b []byte, dev string) (DevSample, error) {
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != dev {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			return DevSample{}, fmt.Errorf("/proc/net/dev: %s has %d columns, want 16", dev, len(f))
		}
		n := make([]uint64, 16)
		for i := range n {
			n[i], _ = strconv.ParseUint(f[i], 10, 64)
		}
		return DevSample{RxBytes: n[0], RxPackets: n[1], RxDropped: n[3], TxBytes: n[8], TxPackets: n[9], TxDropped: n[11]}, nil
	}
	return DevSample{}, fmt.Errorf("/proc/net/dev: no device %s: %w", dev, os.ErrNotExist)
}

// DeviceIRQs finds the interrupts that serve dev (for a USB NIC, its host
// controller's), as inspect does.
func DeviceIRQs(fs *hostfs.FS, dev string) []int {
	p, err := fs.RealPath("/sys/class/net/" + dev + "/device")
	if err != nil {
		return nil
	}
	irqs, _, _ := inspect.DeviceIRQs(fs, p)
	return irqs
}
