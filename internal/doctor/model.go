// SPDX-License-Identifier: Apache-2.0

// Package doctor turns what inspect and observe found into findings a person
// can act on: what is slow, the evidence it rests on, why it costs
// throughput or latency, the fix (as commands to paste and as Actions that
// `wirespeed tune` applies) and how to verify it.
//
// Every rule is a pure function of an Input (a Snapshot, optionally an
// earlier Snapshot and an Observation) and lives in a file of its own,
// registering itself from init() with register(). Rules never read the
// system: fixtures drive their tests.
package doctor

import (
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// SchemaVersion names the JSON layout of Report (docs/doctor-schema.md).
const SchemaVersion = "wirespeed.doctor/v1"

// Severity of a finding.
type Severity string

// Severities, least to most severe.
const (
	Info Severity = "info" // worth knowing; nothing to fix
	Warn Severity = "warn" // costs throughput or latency; a fix exists
	Crit Severity = "crit" // a large, measured loss
)

// Rank orders severities: info 0, warn 1, crit 2, unknown -1.
func (s Severity) Rank() int {
	switch s {
	case Info:
		return 0
	case Warn:
		return 1
	case Crit:
		return 2
	}
	return -1
}

// Input is what the rules see. Snap is required; Before is an earlier
// reading of the same host (counters that moved between the two are
// runtime evidence), Obs an eBPF observation of the host at work.
type Input struct {
	Snap   *inspect.Snapshot
	Before *inspect.Snapshot
	Obs    *observe.Observation
	// Ifaces restricts findings to these devices (empty: all).
	Ifaces []string
}

// Evidence is one fact a finding fired on, traceable to a field of the
// snapshot or observation.
type Evidence struct {
	Source EvidenceSource `json:"source"`
	// Field is the JSON path of the fact in its source, as in the
	// schemas: "devices[eth0].datapath.rx_path", "cpus[0].net_rx_share".
	Field string `json:"field"`
	Value string `json:"value"`
}

// EvidenceSource is where an Evidence's field is.
type EvidenceSource string

// Evidence sources.
const (
	FromSnapshot    EvidenceSource = "snapshot"
	FromObservation EvidenceSource = "observation"
	FromDelta       EvidenceSource = "delta" // a counter that moved, Before -> Snap
)

// Action is one change `wirespeed tune` can apply, read back and revert.
// Kinds are the Kind* constants; Target and Value are in the terms of the
// kind (a path, a sysctl name, an IRQ number, a feature name).
type Action struct {
	// ID is stable across runs for the same change on the same host, and
	// the same whichever finding proposes it (tune dedupes by it):
	// "<knob>:<device>[:<queue or item>]" - "rps_cpus:eth1:rx-0",
	// "irq:46", "sysctl:net.core.netdev_budget", "rx-gro:eth0".
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Device string `json:"device,omitempty"`
	// Target: KindSysfs - an absolute path below /sys; KindIRQAffinity -
	// the IRQ number; KindSysctl - the dotted name ("net.core.netdev_budget");
	// KindEthtool - the feature's ethtool name ("rx-gro"); KindQdisc -
	// "root"; KindGovernor - the CPU list ("0-3"); KindNAPI - the NAPI id
	// with the attribute ("12:threaded").
	Target string `json:"target"`
	Value  string `json:"value"`
	// Command is the shell command the action stands for.
	Command string `json:"command"`
	// Needs lists ids of actions this one is useful only with (RFS needs
	// RPS): tune skips it when one of them was tried and not kept.
	Needs []string `json:"needs,omitempty"`
}

// Action kinds.
const (
	KindSysfs       = "sysfs"        // write Value to the file Target
	KindIRQAffinity = "irq-affinity" // /proc/irq/Target/smp_affinity_list = Value
	KindSysctl      = "sysctl"       // /proc/sys/<Target with dots as slashes> = Value
	KindEthtool     = "ethtool"      // ethtool -K Device Target Value (on|off)
	KindQdisc       = "qdisc"        // tc qdisc replace dev Device root Value
	KindGovernor    = "governor"     // scaling_governor of CPUs Target = Value
	KindNAPI        = "napi-set"     // netdev netlink napi-set id ATTR Value
)

// Fix is what to do about a finding.
type Fix struct {
	// Commands a user can paste, in order; lines starting with "#" are
	// comments (manual steps, such as building our module).
	Commands []string `json:"commands"`
	// Actions are the same change for `wirespeed tune`; empty when the fix
	// is not a knob (a kernel module, a different USB port).
	Actions []Action `json:"actions,omitempty"`
	Caveat  string   `json:"caveat,omitempty"`
}

// Finding is one diagnosis.
type Finding struct {
	ID       string   `json:"id"` // stable: "usbnet-no-gro", "irq-stuck-rps-off"
	Severity Severity `json:"severity"`
	// Impact orders findings (higher first): a rough expected gain, 0-100.
	Impact   int        `json:"impact"`
	Devices  []string   `json:"devices,omitempty"`
	Title    string     `json:"title"`
	Evidence []Evidence `json:"evidence"`
	Why      string     `json:"why"`
	Fix      *Fix       `json:"fix,omitempty"`
	Verify   string     `json:"verify,omitempty"`
	// Unchecked says what the rule could not check and why ("needs
	// --observe", "snapshot taken without root").
	Unchecked []string `json:"unchecked,omitempty"`
}

// Skipped is a rule that could not run, or parts of it that could not.
type Skipped struct {
	Rule   string `json:"rule"`
	Device string `json:"device,omitempty"`
	Reason string `json:"reason"`
}

// Report is doctor's whole answer.
type Report struct {
	Schema   string     `json:"schema"`
	Source   Source     `json:"source"`
	Host     string     `json:"host"`
	Kernel   string     `json:"kernel"`
	Findings []Finding  `json:"findings"`
	Skipped  []Skipped  `json:"skipped,omitempty"`
	Rules    []RuleInfo `json:"rules"` // every rule that ran
}

// Source says what the diagnosis rests on.
type Source struct {
	Snapshot    string  `json:"snapshot"`              // "live" or the file
	Observation string  `json:"observation,omitempty"` // "live 10s", "result FILE", ""
	ObservedSec float64 `json:"observed_s,omitempty"`
	// NetRXShare is the observed NET_RX softirq time share per CPU.
	NetRXShare []float64 `json:"net_rx_share,omitempty"`
	Before     bool      `json:"before"` // a second reading gave counter deltas
	AsRoot     bool      `json:"root"`   // the snapshot was taken as root (not a directory)
}

// RuleInfo names a rule and what it looks for.
type RuleInfo struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
}
