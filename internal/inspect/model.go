// SPDX-License-Identifier: Apache-2.0

// Package inspect assembles a Snapshot of a host's network datapath from
// sysfs, procfs and netlink: per device its identity (and USB topology), NAPI
// instances and their threads, offloads, queues (RPS, XPS, BQL), interrupts;
// per host the kernel's datapath features, CPUs, softnet counters and
// sysctls. Assembly is a pure function of an FS (live, snapshot or fixture)
// and Answers (live netlink or recorded), so fixtures drive the tests.
package inspect

import (
	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

// SchemaVersion names the JSON layout of Snapshot; docs/inspect-schema.md
// documents it and docs/inspect.schema.json is its JSON Schema.
const SchemaVersion = "wirespeed.inspect/v1"

// Snapshot is everything inspect found.
type Snapshot struct {
	Schema  string   `json:"schema"`
	Source  Source   `json:"source"`
	Host    Host     `json:"host"`
	Devices []Device `json:"devices"`
}

// Source says where the data came from.
type Source struct {
	Kind     SourceKind `json:"kind"`
	File     string     `json:"file,omitempty"`
	Captured string     `json:"captured,omitempty"` // RFC 3339, for snapshots
	AsRoot   bool       `json:"root"`               // inspect ran with root privileges (not a directory)
}

// SourceKind says whether a Snapshot was read from the running system.
type SourceKind string

// Source kinds.
const (
	SourceLive     SourceKind = "live"
	SourceSnapshot SourceKind = "snapshot" // replayed from a snapshot file
)

// Tri is a yes/no/unknown answer with the evidence behind it.
type Tri struct {
	State    datapath.State `json:"state"` // "yes", "no", "unknown" in JSON
	Evidence string         `json:"evidence,omitempty"`
}

// Host describes the machine.
type Host struct {
	Hostname string              `json:"hostname"`
	Kernel   string              `json:"kernel"`
	Arch     string              `json:"arch,omitempty"`
	Features Features            `json:"features"`
	CPUs     CPUs                `json:"cpus"`
	Softnet  []procfs.SoftnetCPU `json:"softnet"`
	Sysctls  []Sysctl            `json:"sysctls"`
	// IRQBalance: does irqbalance run (it moves IRQs that tuning placed)?
	IRQBalance Tri `json:"irqbalance"`
	// OS is the distribution (os-release); nil in older snapshots.
	OS *OS `json:"os,omitempty"`
	// OpenWrt is set on OpenWrt (/etc/openwrt_release), platform.go.
	OpenWrt *OpenWrt `json:"openwrt,omitempty"`
	// Services are the running services that own knobs doctor's fixes
	// turn; nil in snapshots taken before inspect asked.
	Services []Service `json:"services,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
}

// Features lists which datapath features this kernel has.
type Features struct {
	ThreadedSysfs   Tri `json:"threaded_sysfs"`    // /sys/class/net/DEV/threaded (5.12+)
	NAPIGet         Tri `json:"napi_get"`          // netdev netlink napi-get (6.8+)
	PerNAPIConfig   Tri `json:"per_napi_config"`   // defer-hard-irqs, gro-flush-timeout per NAPI (6.13+)
	PerNAPIThreaded Tri `json:"per_napi_threaded"` // napi-set threaded (6.17+)
	BQLStallStats   Tri `json:"bql_stall_stats"`   // byte_queue_limits/stall_* (6.9+)
}

// CPUs describes the processors.
type CPUs struct {
	Online  string   `json:"online"` // kernel list, "0-3"
	Count   int      `json:"count"`
	PerCPU  []CPU    `json:"per_cpu"`
	Missing []string `json:"missing,omitempty"` // what could not be read
}

// CPU is one online CPU's frequency scaling state.
type CPU struct {
	CPU        int    `json:"cpu"`
	Governor   string `json:"governor,omitempty"`
	Driver     string `json:"driver,omitempty"`
	CurKHz     *int64 `json:"cur_khz,omitempty"`
	MaxKHz     *int64 `json:"max_khz,omitempty"`
	MinKHz     *int64 `json:"min_khz,omitempty"`
	HasCpufreq bool   `json:"cpufreq"` // a cpufreq policy exists
	// AvailableGovernors is scaling_available_governors: the only values
	// scaling_governor accepts (intel_pstate and amd-pstate-epp in active
	// mode offer performance and powersave only).
	AvailableGovernors []string `json:"available_governors,omitempty"`
	// EPP is energy_performance_preference (intel_pstate, amd-pstate-epp)
	// and EPPAvailable the values it accepts.
	EPP          string   `json:"epp,omitempty"`
	EPPAvailable []string `json:"epp_available,omitempty"`
	// Capacity is cpu_capacity (1024 for the biggest CPUs); nil where the
	// kernel has none (all CPUs alike) or in older snapshots.
	Capacity *int `json:"capacity,omitempty"`
}

// Sysctl is one net.core setting.
type Sysctl struct {
	Name  string `json:"name"` // "net.core.netdev_budget"
	Value string `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

// Device is one network interface.
type Device struct {
	Name       string       `json:"name"`
	Ifindex    int          `json:"ifindex"`
	Driver     string       `json:"driver,omitempty"`
	Bus        string       `json:"bus"` // usb, pci, virtio, platform, virtual, ...
	BusID      string       `json:"bus_id,omitempty"`
	DevicePath string       `json:"device_path,omitempty"` // resolved sysfs path of the device
	USB        *USB         `json:"usb,omitempty"`
	Datapath   Datapath     `json:"datapath"`
	Link       Link         `json:"link"`
	NAPISysfs  NAPISysfs    `json:"napi_sysfs"`
	NAPIs      []NAPI       `json:"napis"`
	NAPIsKnown bool         `json:"napis_known"` // false when napi-get was unavailable
	Threads    []NAPIThread `json:"napi_threads"`
	Offloads   []Offload    `json:"offloads"`
	RXQueues   []RXQueue    `json:"rx_queues"`
	TXQueues   []TXQueue    `json:"tx_queues"`
	IRQs       []IRQ        `json:"irqs"`
	Stats      Stats        `json:"stats"`
	// Wireless is set for a WiFi interface (cfg80211), see wireless.go.
	Wireless *Wireless `json:"wireless,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
}

// USB describes the USB side of a USB network device.
type USB struct {
	Path           string         `json:"path"` // "2-2"
	Interface      string         `json:"interface,omitempty"`
	SpeedMbps      string         `json:"speed_mbps"` // "480", "5000"
	Version        string         `json:"version,omitempty"`
	VendorID       string         `json:"vendor_id"`
	ProductID      string         `json:"product_id"`
	Manufacturer   string         `json:"manufacturer,omitempty"`
	Product        string         `json:"product,omitempty"`
	HostController HostController `json:"host_controller"`
	Neighbours     []USBDevice    `json:"neighbours,omitempty"` // other devices on the same controller
}

// HostController is the USB host controller serving a device.
type HostController struct {
	BusID  string `json:"bus_id"` // "0000:01:00.0"
	Bus    string `json:"bus"`    // pci, platform
	Driver string `json:"driver,omitempty"`
	Path   string `json:"path"`
}

// USBDevice is another device on the same host controller.
type USBDevice struct {
	Path    string   `json:"path"`
	Product string   `json:"product,omitempty"`
	Speed   string   `json:"speed_mbps,omitempty"`
	Drivers []string `json:"drivers,omitempty"`
}

// Datapath says how received packets reach the stack.
type Datapath struct {
	USBNet  Tri `json:"usbnet"`   // driver sits on usbnet (RX via netif_rx, no NAPI, no GRO)
	OwnNAPI Tri `json:"own_napi"` // driver registers NAPI instances
	// RXPath is the path's class (JSON: its text, see docs).
	RXPath     datapath.Path `json:"rx_path"`
	RXPathNote string        `json:"rx_path_note"` // why
	// RXVia names the devices in whose NAPI this one receives: a bridge's
	// ports, a DSA user port's conduit (othercontext.go).
	RXVia []string `json:"rx_via,omitempty"`
}

// Link is the device's link-level state.
type Link struct {
	Operstate  string `json:"operstate,omitempty"`
	Carrier    *bool  `json:"carrier,omitempty"`
	SpeedMbps  *int   `json:"speed_mbps,omitempty"`
	Duplex     string `json:"duplex,omitempty"`
	MTU        *int   `json:"mtu,omitempty"`
	TxQueueLen *int   `json:"txqueuelen,omitempty"`
	Qdisc      string `json:"qdisc,omitempty"`
	QdiscNote  string `json:"qdisc_note,omitempty"`
}

// NAPISysfs holds the device-wide NAPI knobs from sysfs, raw, or the error
// the kernel answered ("EOPNOTSUPP" for threaded on a device without NAPI).
type NAPISysfs struct {
	Threaded          string `json:"threaded"`
	GROFlushTimeout   string `json:"gro_flush_timeout"`
	NAPIDeferHardIRQs string `json:"napi_defer_hard_irqs"`
}

// NAPI is one NAPI instance from netdev netlink napi-get.
type NAPI struct {
	ID                  uint32      `json:"id"`
	IRQ                 *int        `json:"irq,omitempty"`
	PID                 *int        `json:"pid,omitempty"`
	DeferHardIRQs       *uint32     `json:"defer_hard_irqs,omitempty"`
	GROFlushTimeoutNS   *uint64     `json:"gro_flush_timeout_ns,omitempty"`
	IRQSuspendTimeoutNS *uint64     `json:"irq_suspend_timeout_ns,omitempty"`
	Threaded            string      `json:"threaded,omitempty"` // per-NAPI (6.17+): disabled, enabled, busy-poll
	RXQueues            []uint32    `json:"rx_queues,omitempty"`
	TXQueues            []uint32    `json:"tx_queues,omitempty"`
	Thread              *NAPIThread `json:"thread,omitempty"`
}

// NAPIThread is a napi/<dev>-<id> kernel thread.
type NAPIThread struct {
	PID        int    `json:"pid"`
	Comm       string `json:"comm"`
	CPU        int    `json:"cpu"`          // CPU it last ran on
	AllowedCPU string `json:"allowed_cpus"` // Cpus_allowed_list
	State      string `json:"state,omitempty"`
}

// Offload is one ethtool feature.
type Offload struct {
	Name   string `json:"name"`    // short name (rx-gro, tso, ...)
	Kernel string `json:"feature"` // kernel feature string(s)
	Active *bool  `json:"active,omitempty"`
	Fixed  bool   `json:"fixed"`
	Error  string `json:"error,omitempty"`
}

// RXQueue is one receive queue.
type RXQueue struct {
	Name       string `json:"name"`               // rx-0
	RPSCPUs    string `json:"rps_cpus,omitempty"` // mask as read
	RPSCPUList string `json:"rps_cpu_list"`       // decoded
	RPSFlowCnt *int   `json:"rps_flow_cnt,omitempty"`
	Error      string `json:"error,omitempty"`
}

// TXQueue is one transmit queue.
type TXQueue struct {
	Name      string `json:"name"` // tx-0
	XPSCPUs   string `json:"xps_cpus,omitempty"`
	XPSNote   string `json:"xps_note,omitempty"` // "not applicable: one TX queue"
	TxMaxRate *int   `json:"tx_maxrate,omitempty"`
	BQL       *BQL   `json:"bql,omitempty"`
}

// BQL is a TX queue's byte_queue_limits directory.
type BQL struct {
	Limit     *int64 `json:"limit"`
	LimitMin  *int64 `json:"limit_min"`
	LimitMax  *int64 `json:"limit_max"`
	Inflight  *int64 `json:"inflight"`
	HoldTime  *int64 `json:"hold_time_ms"`
	StallThrs *int64 `json:"stall_thrs,omitempty"`
	StallCnt  *int64 `json:"stall_cnt,omitempty"`
	StallMax  *int64 `json:"stall_max,omitempty"`
}

// IRQ is one interrupt line serving the device.
type IRQ struct {
	Number            int      `json:"irq"`
	Actions           []string `json:"actions,omitempty"`
	Chip              string   `json:"chip,omitempty"`
	Via               string   `json:"via"`    // how it was found
	Counts            []uint64 `json:"counts"` // per CPU, order of the cpus field
	CountCPUs         []int    `json:"cpus"`
	Total             uint64   `json:"total"`
	SMPAffinity       string   `json:"smp_affinity,omitempty"`
	SMPAffinityList   string   `json:"smp_affinity_list,omitempty"`
	EffectiveAffinity string   `json:"effective_affinity_list,omitempty"`
	Changeable        Tri      `json:"affinity_changeable"`
	SharedWith        []string `json:"shared_with,omitempty"`
}

// Stats are the device counters.
type Stats struct {
	RxPackets *uint64 `json:"rx_packets,omitempty"`
	TxPackets *uint64 `json:"tx_packets,omitempty"`
	RxBytes   *uint64 `json:"rx_bytes,omitempty"`
	TxBytes   *uint64 `json:"tx_bytes,omitempty"`
	RxDropped *uint64 `json:"rx_dropped,omitempty"`
	TxDropped *uint64 `json:"tx_dropped,omitempty"`
	RxErrors  *uint64 `json:"rx_errors,omitempty"`
	TxErrors  *uint64 `json:"tx_errors,omitempty"`
}
