// SPDX-License-Identifier: Apache-2.0

// Package observe watches the network datapath at work with eBPF programs on
// classic tracepoints (no BTF needed): which CPU and context polls each NAPI
// instance and how much work each poll does, which RX path every device uses
// (NAPI + GRO, NAPI without GRO, netif_rx backlog) and how well GRO coalesces,
// and how much time NET_RX/NET_TX softirqs and device interrupts take per CPU.
//
// The kernel side (bpf/observe.c) only counts, in per-CPU maps. The model
// files hold the pure part, testable without a kernel: this one the
// Observation's types, model_raw.go the raw counts (Raw) and their
// difference between two reads, model_build.go the Observation built from
// them (Build), model_classify.go the RX path class of a device.
package observe

import (
	"time"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// SchemaVersion names the JSON layout of Observation.
const SchemaVersion = "wirespeed.observe/v1"

// HistBins is the number of work-per-poll histogram bins in the BPF map:
// bin 0 is work 0, bins 1..16 split (0, budget] in 16 equal parts, bin 17
// counts polls that did more than the budget (drivers that ignore it).
// HIST_BINS in bpf/observe.h (TestMapSizesMatchTheObjects ties them).
const HistBins = 18

// Softirq vector numbers (include/linux/interrupt.h); NrVecs is NR_VECS
// in bpf/observe.h, softirq_stats' size (TestMapSizesMatchTheObjects).
const (
	VecNetTX = 2
	VecNetRX = 3
	NrVecs   = 10
)

// Poll contexts as the BPF program records them.
const (
	CtxUnknown = 0
	CtxSoftirq = 1
	CtxTask    = 2
)

// RX event kinds as the BPF program records them.
const (
	RXGro       = 0 // net:napi_gro_receive_entry
	RXSkb       = 1 // net:netif_receive_skb
	RXSkbEntry  = 2 // net:netif_receive_skb_entry
	RXListEntry = 3 // net:netif_receive_skb_list_entry
	RXNetifRx   = 4 // net:netif_rx
	rxKinds     = 5
)

// The RX path classes observe tells apart (datapath.Path: typed, written
// as their text).
var (
	PathNAPIGRO   = datapath.NAPIPath(datapath.Yes, datapath.ModeUnset) // "NAPI + GRO"
	PathNAPINoGRO = datapath.NAPIPath(datapath.No, datapath.ModeUnset)  // "NAPI, no GRO"
	PathNetifRx   = datapath.NetifRxPath
	PathDirect    = datapath.DirectPath
	PathOther     = datapath.OtherPath
	PathIdle      = datapath.IdlePath
	PathBacklog   = datapath.BacklogPath
)

// BacklogDev is the name napi:napi_poll gives the per-CPU backlog NAPIs,
// which have no device; observe reports them under this name.
const BacklogDev = "(no_device)"

// Observation is what observe reports for one time window.
//
// Counts (polls, work, segments, skbs, bytes, softirqs, interrupts) are
// what the programs saw while attached; rates (*_per_s) and time shares
// are per second of attached time, and ratios (GRO ratio, poll and work
// shares, full-budget share) need no time at all. Without sampling,
// attached time is the duration.
type Observation struct {
	Schema      string        `json:"schema"`
	Start       time.Time     `json:"start"`
	DurationSec float64       `json:"duration_s"` // wall time
	Sample      *Sampling     `json:"sample,omitempty"`
	NCPU        int           `json:"ncpu"`
	Filter      []string      `json:"filter,omitempty"` // device names asked for
	Events      []EventStatus `json:"events"`
	Devices     []Device      `json:"devices"`
	CPUs        []CPU         `json:"cpus"`
	IRQs        []IRQ         `json:"irqs,omitempty"`
	DQLStalls   *DQLStalls    `json:"dql_stalls,omitempty"` // nil when the tracepoint is absent
	Lost        uint64        `json:"lost_map_updates"`     // events not counted: a map was full
	Notes       []string      `json:"notes,omitempty"`
}

// Sampling says how much of the window the programs were attached for
// (Options.Sample); absent when they were attached throughout.
type Sampling struct {
	Fraction    float64 `json:"fraction"` // asked for: attached Fraction of every period
	PeriodSec   float64 `json:"period_s"`
	AttachedSec float64 `json:"attached_s"` // measured: the windows' sum
}

// EventStatus says whether a tracepoint was counted.
type EventStatus struct {
	Event  string `json:"event"`  // "napi:napi_poll"
	Status string `json:"status"` // attached, missing, format-mismatch, failed
	Detail string `json:"detail,omitempty"`
}

// Device is one network device as the tracepoints name it. Devices in other
// network namespaces can share a name with a host device; tracepoints carry
// no ifindex or namespace, so such devices are summed under the one name
// (NAPI pointers and NAPI ids still tell them apart).
type Device struct {
	Name           string        `json:"name"`
	RXPath         datapath.Path `json:"rx_path"`
	RXPathNote     string        `json:"rx_path_note,omitempty"`
	GROSegments    uint64        `json:"gro_segments"`      // napi_gro_receive_entry
	GROBytes       uint64        `json:"gro_bytes"`         // napi_gro_receive_entry len sum
	Delivered      uint64        `json:"delivered_skbs"`    // netif_receive_skb
	DeliveredBytes uint64        `json:"delivered_bytes"`   // netif_receive_skb len sum
	ReceiveEntry   uint64        `json:"receive_skb_entry"` // netif_receive_skb_entry
	ListEntry      uint64        `json:"receive_list_entry"`
	NetifRx        uint64        `json:"netif_rx"`
	GRORatio       *float64      `json:"gro_ratio,omitempty"` // segments per delivered skb
	// Per attached second.
	GROSegmentsPerSec    float64 `json:"gro_segments_per_s"`
	DeliveredPerSec      float64 `json:"delivered_skbs_per_s"`
	DeliveredBytesPerSec float64 `json:"delivered_bytes_per_s"`
	NetifRxPerSec        float64 `json:"netif_rx_per_s"`
	// GROFrom says where the GRO input count comes from: the
	// napi_gro_receive_entry events, or in light mode the NAPI polls' work
	// (packets the driver handed up; an estimate).
	GROFrom string   `json:"gro_from,omitempty"`
	NAPIIDs []uint32 `json:"napi_ids,omitempty"` // from the rx events
	NAPIs   []NAPI   `json:"napis"`
	IRQs    []int    `json:"irqs,omitempty"`
}

// NAPI is one NAPI instance (one napi_struct) of a device.
type NAPI struct {
	Napi        string        `json:"napi"` // kernel address, as an identity
	Polls       uint64        `json:"polls"`
	Work        uint64        `json:"work"`
	PollsPerSec float64       `json:"polls_per_s"` // per attached second
	WorkPerSec  float64       `json:"work_per_s"`
	WorkPerPoll float64       `json:"work_per_poll"`
	Budget      uint32        `json:"budget"`
	MaxWork     uint32        `json:"max_work"`
	FullBudget  uint64        `json:"full_budget_polls"`
	FullShare   float64       `json:"full_budget_share"`
	Hist        []HistBin     `json:"work_histogram"`
	Contexts    []PollContext `json:"contexts"`
	CPUs        []NAPICPU     `json:"cpus"`
}

// HistBin counts polls whose work was in [Lo, Hi].
type HistBin struct {
	Lo    uint32 `json:"lo"`
	Hi    uint32 `json:"hi"` // 0 with Lo > 0: above the budget
	Polls uint64 `json:"polls"`
}

// PollContext is where polls ran: softirq, or a task (napi/<dev>-<id>
// kthread for threaded NAPI, a user task for busy polling).
type PollContext struct {
	Kind      PollKind `json:"kind"`
	PID       uint32   `json:"pid,omitempty"`
	Comm      string   `json:"comm,omitempty"`
	Polls     uint64   `json:"polls"`
	Work      uint64   `json:"work"`
	PollShare float64  `json:"poll_share"`
}

// PollKind is the context NAPI polls ran in.
type PollKind string

// Poll contexts as the Observation names them.
const (
	PollSoftirq PollKind = "softirq"
	PollThread  PollKind = "thread" // a napi/<dev>-<id> kthread
	PollTask    PollKind = "task"   // another task: busy polling
	PollUnknown PollKind = "unknown"
)

// NAPICPU is a NAPI's activity on one CPU.
type NAPICPU struct {
	CPU       int     `json:"cpu"`
	Polls     uint64  `json:"polls"`
	Work      uint64  `json:"work"`
	PollShare float64 `json:"poll_share"`
	WorkShare float64 `json:"work_share"`
}

// CPU is softirq time on one CPU.
type CPU struct {
	CPU          int      `json:"cpu"`
	NetRX        uint64   `json:"net_rx_softirqs"`
	NetRXNs      uint64   `json:"net_rx_ns"`
	NetRXShare   float64  `json:"net_rx_share"` // of attached time
	NetTX        uint64   `json:"net_tx_softirqs"`
	NetTXNs      uint64   `json:"net_tx_ns"`
	NetTXShare   float64  `json:"net_tx_share"`
	SoftirqCount []uint64 `json:"softirqs_by_vec"` // all vectors, /proc/softirqs order
}

// IRQ is one hardware interrupt that fired during the window.
type IRQ struct {
	IRQ     int      `json:"irq"`
	Name    string   `json:"name,omitempty"` // actions from /proc/interrupts
	Devices []string `json:"devices,omitempty"`
	Count   uint64   `json:"count"`
	Ns      uint64   `json:"ns"`
	PerSec  float64  `json:"per_s"`      // per attached second
	Share   float64  `json:"time_share"` // of one CPU's attached time
	PerCPU  []uint64 `json:"per_cpu"`
}

// DQLStalls summarises napi:dql_stall_detected.
type DQLStalls struct {
	Count   uint64 `json:"count"`
	MaxLen  uint64 `json:"max_len"`
	MaxThrs uint64 `json:"max_thrs"`
}
