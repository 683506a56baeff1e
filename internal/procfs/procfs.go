// SPDX-License-Identifier: Apache-2.0

// Package procfs parses the /proc files wirespeed reads. The parsers take the
// file's bytes, so they work the same on a live host, a snapshot and a test
// fixture; reading goes through internal/hostfs.
package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// SoftnetCPU is one row of /proc/net/softnet_stat.
type SoftnetCPU struct {
	CPU            int    `json:"cpu"`
	Processed      uint64 `json:"processed"`
	Dropped        uint64 `json:"dropped"`
	TimeSqueeze    uint64 `json:"time_squeeze"`
	ReceivedRPS    uint64 `json:"received_rps"`
	FlowLimitCount uint64 `json:"flow_limit_count"`
	BacklogLen     uint64 `json:"backlog_len"`
	InputQlen      uint64 `json:"input_qlen"`
	ProcessQlen    uint64 `json:"process_qlen"`
}

// ParseSoftnetStat parses /proc/net/softnet_stat. Its columns are processed,
// dropped, time_squeeze, six zero columns, received_rps, flow_limit_count,
// backlog length, cpu index, input_qlen and process_qlen; older kernels print
// fewer, and rows without a CPU column are numbered by position.
func ParseSoftnetStat(b []byte) ([]SoftnetCPU, error) {
	var out []SoftnetCPU
	for i, line := range nonEmptyLines(b) {
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("softnet_stat line %d: %d columns, want at least 3", i+1, len(f))
		}
		v := make([]uint64, len(f))
		for j, s := range f {
			n, err := strconv.ParseUint(s, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("softnet_stat line %d column %d: %q is not hex", i+1, j+1, s)
			}
			v[j] = n
		}
		col := func(k int) uint64 {
			if k < len(v) {
				return v[k]
			}
			return 0
		}
		row := SoftnetCPU{
			CPU: i, Processed: v[0], Dropped: v[1], TimeSqueeze: v[2],
			ReceivedRPS: col(9), FlowLimitCount: col(10), BacklogLen: col(11),
			InputQlen: col(13), ProcessQlen: col(14),
		}
		if len(v) > 12 {
			row.CPU = int(v[12])
		}
		out = append(out, row)
	}
	return out, nil
}

// CPUTimes holds one "cpu" line of /proc/stat, in clock ticks (USER_HZ).
type CPUTimes struct {
	CPU     int    `json:"cpu"` // -1 for the aggregate "cpu" line
	User    uint64 `json:"user"`
	Nice    uint64 `json:"nice"`
	System  uint64 `json:"system"`
	Idle    uint64 `json:"idle"`
	IOWait  uint64 `json:"iowait"`
	IRQ     uint64 `json:"irq"`
	SoftIRQ uint64 `json:"softirq"`
	Steal   uint64 `json:"steal"`
}

// Total is the sum of all fields.
func (c CPUTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// ParseStat parses the cpu lines of /proc/stat: the aggregate first (CPU -1),
// then one per CPU.
func ParseStat(b []byte) ([]CPUTimes, error) {
	var out []CPUTimes
	for _, line := range nonEmptyLines(b) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		c := CPUTimes{CPU: -1}
		if f[0] != "cpu" {
			n, err := strconv.Atoi(f[0][3:])
			if err != nil {
				return nil, fmt.Errorf("/proc/stat: bad cpu label %q", f[0])
			}
			c.CPU = n
		}
		dst := []*uint64{&c.User, &c.Nice, &c.System, &c.Idle, &c.IOWait, &c.IRQ, &c.SoftIRQ, &c.Steal}
		for i, p := range dst {
			if i+1 >= len(f) {
				break
			}
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/stat %s: bad number %q", f[0], f[i+1])
			}
			*p = n
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/stat: no cpu lines")
	}
	return out, nil
}

// Softirqs is /proc/softirqs: per softirq name ("NET_RX"), a count per CPU
// in the order of CPUs.
type Softirqs struct {
	CPUs   []int               `json:"cpus"`
	Counts map[string][]uint64 `json:"counts"`
}

// ParseSoftirqs parses /proc/softirqs.
func ParseSoftirqs(b []byte) (*Softirqs, error) {
	lines := nonEmptyLines(b)
	if len(lines) == 0 {
		return nil, fmt.Errorf("/proc/softirqs: empty")
	}
	cpus, err := parseCPUHeader(lines[0])
	if err != nil {
		return nil, fmt.Errorf("/proc/softirqs: %w", err)
	}
	s := &Softirqs{CPUs: cpus, Counts: map[string][]uint64{}}
	for _, line := range lines[1:] {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("/proc/softirqs: bad line %q", line)
		}
		f := strings.Fields(rest)
		if len(f) < len(cpus) {
			return nil, fmt.Errorf("/proc/softirqs: %s has %d counts for %d CPUs", strings.TrimSpace(name), len(f), len(cpus))
		}
		v := make([]uint64, len(cpus))
		for i := range cpus {
			if v[i], err = strconv.ParseUint(f[i], 10, 64); err != nil {
				return nil, fmt.Errorf("/proc/softirqs: bad count %q", f[i])
			}
		}
		s.Counts[strings.TrimSpace(name)] = v
	}
	return s, nil
}

// Interrupt is one line of /proc/interrupts.
type Interrupt struct {
	IRQ     string   `json:"irq"`    // "46", or "NMI", "LOC" for the architecture's counters
	Number  int      `json:"number"` // -1 for non-numeric lines
	Counts  []uint64 `json:"counts"` // per CPU, in the header's order
	Desc    string   `json:"desc"`   // chip, hwirq and type as printed
	Actions []string `json:"actions,omitempty"`
}

// Interrupts is /proc/interrupts.
type Interrupts struct {
	CPUs  []int       `json:"cpus"`
	Lines []Interrupt `json:"lines"`
}

// ParseInterrupts parses /proc/interrupts. The chip/type columns are free
// text (chip names contain spaces), so the action names are taken as the
// last field separated by two or more spaces, as the kernel prints them.
func ParseInterrupts(b []byte) (*Interrupts, error) {
	lines := nonEmptyLines(b)
	if len(lines) == 0 {
		return nil, fmt.Errorf("/proc/interrupts: empty")
	}
	cpus, err := parseCPUHeader(lines[0])
	if err != nil {
		return nil, fmt.Errorf("/proc/interrupts: %w", err)
	}
	out := &Interrupts{CPUs: cpus}
	for _, line := range lines[1:] {
		label, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		label = strings.TrimSpace(label)
		irq := Interrupt{IRQ: label, Number: -1}
		if n, err := strconv.Atoi(label); err == nil {
			irq.Number = n
		}
		// Counts: up to len(cpus) numeric fields; some lines (ERR, MIS) have one.
		rest = strings.TrimLeft(rest, " ")
		for len(irq.Counts) < len(cpus) {
			tok, tail, _ := strings.Cut(rest, " ")
			n, err := strconv.ParseUint(tok, 10, 64)
			if err != nil {
				break
			}
			irq.Counts = append(irq.Counts, n)
			rest = strings.TrimLeft(tail, " ")
		}
		fields := splitWide(rest)
		if irq.Number >= 0 && len(fields) >= 2 {
			irq.Desc = strings.Join(fields[:len(fields)-1], " ")
			for _, a := range strings.Split(fields[len(fields)-1], ",") {
				if a = strings.TrimSpace(a); a != "" {
					irq.Actions = append(irq.Actions, a)
				}
			}
		} else {
			irq.Desc = strings.Join(fields, " ")
		}
		out.Lines = append(out.Lines, irq)
	}
	return out, nil
}

// Find returns the line for a numeric IRQ, or nil.
func (in *Interrupts) Find(irq int) *Interrupt {
	for i := range in.Lines {
		if in.Lines[i].Number == irq {
			return &in.Lines[i]
		}
	}
	return nil
}

// PidStat is the part of /proc/PID/stat wirespeed uses.
type PidStat struct {
	PID       int    `json:"pid"`
	Comm      string `json:"comm"`
	State     string `json:"state"`
	UTime     uint64 `json:"utime"` // clock ticks
	STime     uint64 `json:"stime"`
	Processor int    `json:"processor"` // CPU it last ran on
}

// ParsePidStat parses /proc/PID/stat. The comm field may contain spaces and
// parentheses, so the fields after it are located from the last ')'.
func ParsePidStat(b []byte) (*PidStat, error) {
	s := strings.TrimSpace(string(b))
	open := strings.IndexByte(s, '(')
	closeIdx := strings.LastIndexByte(s, ')')
	if open < 0 || closeIdx < open {
		return nil, fmt.Errorf("pid stat: no (comm) in %q", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil || pid <= 0 {
		return nil, fmt.Errorf("pid stat: bad pid in %q", s)
	}
	f := strings.Fields(s[closeIdx+1:])
	// f[0] is field 3 (state); utime is field 14, stime 15, processor 39.
	if len(f) < 37 {
		return nil, fmt.Errorf("pid stat: %d fields after comm, want at least 37", len(f))
	}
	p := &PidStat{PID: pid, Comm: s[open+1 : closeIdx], State: f[0]}
	if p.UTime, err = strconv.ParseUint(f[11], 10, 64); err != nil {
		return nil, fmt.Errorf("pid stat: bad utime %q", f[11])
	}
	if p.STime, err = strconv.ParseUint(f[12], 10, 64); err != nil {
		return nil, fmt.Errorf("pid stat: bad stime %q", f[12])
	}
	if p.Processor, err = strconv.Atoi(f[36]); err != nil || p.Processor < 0 {
		return nil, fmt.Errorf("pid stat: bad processor %q", f[36])
	}
	return p, nil
}

// StatusField returns the value of "Key:" in /proc/PID/status (for example
// "Cpus_allowed_list"), or "" when absent.
func StatusField(b []byte, key string) string {
	for _, line := range nonEmptyLines(b) {
		k, v, ok := strings.Cut(line, ":")
		if ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func parseCPUHeader(line string) ([]int, error) {
	var cpus []int
	for _, f := range strings.Fields(line) {
		n, err := strconv.Atoi(strings.TrimPrefix(f, "CPU"))
		if err != nil || !strings.HasPrefix(f, "CPU") {
			return nil, fmt.Errorf("bad CPU header %q", line)
		}
		cpus = append(cpus, n)
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("no CPUs in header %q", line)
	}
	return cpus, nil
}

// splitWide splits s at runs of two or more spaces.
func splitWide(s string) []string {
	var out []string
	for _, part := range strings.Split(s, "  ") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func nonEmptyLines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	return out
}
