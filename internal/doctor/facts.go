package doctor

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Kernel and driver facts as data. Every rule that depends on what a
// kernel release has (a feature, a fix, a regression) reads it from facts
// below, and every source a finding cites is named here, so a user can
// look it up: a release, a commit subject, a paper, an article. The test
// TestKernelKnowledgeInFacts fails when a rule file other than this one
// holds a kernel version in a string.

// Fact is one feature or fix of the kernel or a driver.
type Fact struct {
	Key  string // what rules ask for: "usbnet-bql"
	What string // for people
	// Release is the first mainline release that has it ("6.19"); empty
	// where none is known yet (then Commit says what to look for).
	Release string
	// Commit is the upstream commit subject (with its id where known).
	Commit string
	// Source is where to read about it.
	Source string
	// Stable lists stable releases that carried it as a backport, each
	// range inclusive ("6.12.34".."6.12.73").
	Stable []Range
	Note   string
}

// Range is an inclusive range of stable releases of one series.
type Range struct{ From, To string }

func (r Range) String() string { return r.From + "-" + r.To }

// After is the first release past the range: "6.12.74" for 6.12.34-6.12.73.
func (r Range) After() string {
	k, ok := ParseKernel(r.To)
	if !ok {
		return "a release after " + r.To
	}
	return fmt.Sprintf("%d.%d.%d", k.Major, k.Minor, k.Patch+1)
}

// InStable: is kernel rel in one of fact key's stable ranges? r is that
// range (or, with known false, the range of rel's series whose membership
// the name cannot tell).
func InStable(rel, key string) (r Range, in, known bool) {
	k, ok := ParseKernel(rel)
	if !ok {
		return Range{}, false, false
	}
	for _, r := range fact(key).Stable {
		in, known := k.InRange(r)
		if in || !known {
			return r, in, known
		}
	}
	return Range{}, false, true
}

// Facts is the table. Keys are stable; rules look them up with fact().
var Facts = []Fact{
	{Key: "threaded-sysfs", What: "/sys/class/net/DEV/threaded: threaded NAPI for a device", Release: "5.12",
		Commit: "net: add sysfs attribute to control napi threaded mode", Source: "Documentation/ABI/testing/sysfs-class-net (threaded)"},
	{Key: "r8152-gro-frags", What: "r8152 receives through napi_gro_frags()", Release: "6.7",
		Commit: "r8152: use napi_gro_frags", Source: "drivers/net/usb/r8152.c"},
	{Key: "napi-get", What: "netdev netlink napi-get (NAPI id, irq, pid per instance)", Release: "6.8",
		Source: "Documentation/netlink/specs/netdev.yaml (napi-get)"},
	{Key: "bql-stall-stats", What: "BQL stall counters byte_queue_limits/stall_thrs, stall_cnt, stall_max", Release: "6.9",
		Commit: "net: dqs: add NIC stall detector based on BQL", Source: "Documentation/ABI/testing/sysfs-class-net-queues"},
	{Key: "napi-set-config", What: "per-NAPI config via netdev netlink napi-set (defer-hard-irqs, gro-flush-timeout), IRQ suspension", Release: "6.13",
		Source: "Documentation/netlink/specs/netdev.yaml (napi-set); Documentation/networking/napi.rst"},
	{Key: "wg-threaded-default", What: "WireGuard devices get threaded NAPI by default", Release: "6.16",
		Commit: `db9ae3b6b43c "wireguard: device: enable threaded NAPI"`,
		Source: "the commit; the measurements behind it: netdev 0x18, paper 23 (https://netdevconf.info/0x18/docs/netdev-0x18-paper23-talk-paper.pdf)",
		// The backport was reverted from stable in Feb 2026; the ranges are
		// the stable releases that had it, as CVE-2026-52945 lists them.
		Stable: []Range{{"5.15.186", "5.15.200"}, {"6.1.142", "6.1.163"}, {"6.6.94", "6.6.126"}, {"6.12.34", "6.12.73"}},
		Note: "backported to stable and reverted from stable (Feb 2026): with threaded NAPI a peer's RX could stall for good - " +
			"the poll exits while the head packet is still being decrypted, and the later schedule produces no poll (CVE-2026-52945)"},
	{Key: "per-napi-threaded", What: "per-NAPI threaded via netdev netlink napi-set threaded", Release: "6.17",
		Source: "Documentation/netlink/specs/netdev.yaml (napi-set threaded)"},
	{Key: "threaded-busy-poll", What: "threaded NAPI busy polling (threaded = busy-poll)", Release: "6.19",
		Source: "Documentation/networking/napi.rst (threaded busy polling)"},
	{Key: "usbnet-bql", What: "usbnet uses Byte Queue Limits", Release: "6.19",
		Commit: `7ff14c52049e "usbnet: Add support for Byte Queue Limits (BQL)"`,
		Source: "the commit: a prioritized ping under iperf3 load 35 -> 5 ms on a 100 Mbit/s link behind a USB 3 ax88179",
		Note:   "the limit restarts at 0 when the interface is opened again, while tx_packets keeps counting: a 0 limit is no sign that BQL is unused"},
	{Key: "usbnet-bql-dql-fix", What: "fix: a crash in dql_completed() when usbnet's queue reset raced its BH work", Release: "6.19",
		Commit: "usbnet: avoid a possible crash in dql_completed()", Source: "the commit (6.19-rc4)"},
	{Key: "usbnet-bql-resume-fix", What: "fix: missing BQL accounting for frames usbnet_resume() queues again (cdc_ncm crashed within 3 suspend cycles)",
		Commit: "usbnet: fix crash due to missing BQL accounting after resume", Source: "the commit (netdev)"},
	{Key: "mt76u-threaded-napi", What: "mt76 USB WiFi (mt7921u, ...) receives through a threaded NAPI with GRO",
		Commit: "wifi: mt76: mt76u: use a threaded NAPI for the RX path",
		Source: "wireless-next, 2026-08-02 (acked by mt76's maintainer 2026-06-09); the article \"Making USB WiFi 55% Faster on Linux: Threaded NAPI in the mt76 Driver\"",
		Note:   "in no released kernel yet"},
}

// Sources that findings cite besides the commits above.
const (
	// srcPi4Article is the measurement of USB NICs on a Raspberry Pi 4.
	srcPi4Article = "the article \"Raspberry PI 4B USB Network Performance\" (Pi 4B, Alpine 3.15, kernel 5.15.4-0-rpi4, iperf3 with 10 streams)"
	// srcMT76Article is the mt76u threaded NAPI author's write-up.
	srcMT76Article = "the article \"Making USB WiFi 55% Faster on Linux: Threaded NAPI in the mt76 Driver\" (mt7921u, 2x2 HE80, bulk TCP: 380 -> 588 Mbit/s)"
	// srcWGPaper is the paper behind WireGuard's threaded default.
	srcWGPaper = "netdev 0x18, paper 23 (16 WireGuard tunnels on a 32-core gateway: 13 -> 48 Gbit/s with threaded NAPI)"
	// srcUsbnetBQLMark is the measurement behind tx-no-bql's claim.
	srcUsbnetBQLMark = "kernel/usbnet/README.md, Linux 6.12 in QEMU, a cdc_ncm link capped at 100 Mbit/s, two bulk TCP streams sending, prio qdisc: a prioritized probe's added latency fell from 22-24 ms to 2.9-4.3 ms"
	// srcVethGRO is a measurement of veth's backlog path against its NAPI.
	srcVethGRO = "a veth receiver in a 2-vCPU VM (kernel 6.18, iperf3 -P 4, sender TSO/GSO off): 8.0 Gbit/s with GRO off (netif_rx backlog), 10.9 with GRO on (veth's NAPI)"
)

var factIndex = func() map[string]*Fact {
	m := map[string]*Fact{}
	for i := range Facts {
		if m[Facts[i].Key] != nil {
			panic("doctor: fact listed twice: " + Facts[i].Key)
		}
		m[Facts[i].Key] = &Facts[i]
	}
	return m
}()

// fact returns the fact with key; an unknown key is a programming error.
func fact(key string) *Fact {
	f := factIndex[key]
	if f == nil {
		panic("doctor: no fact " + key)
	}
	return f
}

// Cite names a fact as a user can look it up: its release (or "not in a
// release yet") and its commit subject.
func (f *Fact) Cite() string {
	var parts []string
	if f.Release != "" {
		parts = append(parts, "Linux "+f.Release)
	}
	if f.Commit != "" {
		parts = append(parts, "commit "+f.Commit)
	}
	if len(parts) == 0 {
		return f.Source
	}
	return strings.Join(parts, ", ")
}

// StableRanges lists the stable ranges as "5.15.186-5.15.200, ...".
func (f *Fact) StableRanges() string {
	var s []string
	for _, r := range f.Stable {
		s = append(s, r.String())
	}
	return strings.Join(s, ", ")
}

// Kernel is a kernel release string read as a version. Distribution names
// carry the version first: 6.12.117+deb12-arm64, 6.12.47+rpt-rpi-v8,
// 5.15.4-0-rpi4, 6.1.21-v8+, 6.19.3-arch1-1. Debian's and Ubuntu's ABI
// names (6.1.0-56-amd64, 5.15.0-1034-raspi, 6.8.0-45-generic) put 0 where
// the patch level goes and the ABI number after it: their patch level is
// not in the name (Debian's package version is: uname -v shows it), so
// PatchKnown is false and questions that need it answer "unknown".
type Kernel struct {
	Release             string
	Major, Minor, Patch int
	PatchKnown          bool
}

var kernelRe = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?(.*)$`)

// abiSuffix: what follows X.Y.0 in an ABI name: "-56-amd64", "-1034-raspi".
var abiSuffix = regexp.MustCompile(`^-\d+(-|$)`)

// ParseKernel reads a release string; ok is false when it does not start
// with a version.
func ParseKernel(release string) (k Kernel, ok bool) {
	m := kernelRe.FindStringSubmatch(strings.TrimSpace(release))
	if m == nil {
		return Kernel{Release: release}, false
	}
	k.Release = release
	k.Major, _ = strconv.Atoi(m[1])
	k.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		k.Patch, _ = strconv.Atoi(m[3])
		k.PatchKnown = !(k.Patch == 0 && abiSuffix.MatchString(m[4]))
	}
	return k, true
}

// Series is "major.minor".
func (k Kernel) Series() string { return fmt.Sprintf("%d.%d", k.Major, k.Minor) }

// AtLeast: is k release rel ("6.19") or later? Mainline releases are
// compared by major.minor, which every name carries.
func (k Kernel) AtLeast(rel string) bool {
	r, ok := ParseKernel(rel)
	if !ok {
		return false
	}
	return k.Major > r.Major || k.Major == r.Major && k.Minor >= r.Minor
}

// InRange: is k in the stable range r? known is false when k is of r's
// series but its name does not carry the patch level.
func (k Kernel) InRange(r Range) (in, known bool) {
	lo, ok1 := ParseKernel(r.From)
	hi, ok2 := ParseKernel(r.To)
	if !ok1 || !ok2 || k.Major != lo.Major || k.Minor != lo.Minor {
		return false, true
	}
	if !k.PatchKnown {
		return false, false
	}
	return k.Patch >= lo.Patch && k.Patch <= hi.Patch, true
}

// Has says whether kernel release rel has fact key: Yes, No or Unknown
// (no release known for the fact, or a stable backport that
// needs the patch level the name does not carry). A stable range counts
// as having it.
func Has(rel, key string) datapath.State {
	f := fact(key)
	k, ok := ParseKernel(rel)
	if !ok {
		return datapath.Unknown
	}
	if f.Release != "" && k.AtLeast(f.Release) {
		return datapath.Yes
	}
	for _, r := range f.Stable {
		in, known := k.InRange(r)
		if !known {
			return datapath.Unknown
		}
		if in {
			return datapath.Yes
		}
	}
	if f.Release == "" {
		return datapath.Unknown
	}
	return datapath.No
}

// usbnetHasBQL: d is on a usbnet that calls the BQL hooks because its
// kernel has them in tree. After the interface is opened again the limit
// reads 0 while tx_packets keeps its count, so the readings prove nothing.
func usbnetHasBQL(kernel string, d *inspect.Device) bool {
	return d.Datapath.USBNet.State == datapath.Yes && Has(kernel, "usbnet-bql") == datapath.Yes
}

// patchUnknownNote says why a Debian/Ubuntu ABI name leaves a question open.
func patchUnknownNote(rel string) string {
	return "kernel " + rel + " is an ABI name: it does not carry the patch level (uname -v shows the package version, such as Debian's 6.1.158-1)"
}

// The kernels wirespeed's usbnet module (kernel/usbnet) builds for.

// ModuleKernels matches the kernels kernel/usbnet builds for, the rule of
// its dkms.conf: any kernel of the 6.1 or 6.12 family, whatever its name.
var ModuleKernels = regexp.MustCompile(`^(6\.1|6\.12)\.[0-9]+([^0-9].*)?$`)

// ModuleKernelsText says the same for people.
const ModuleKernelsText = "the Linux 6.1 and 6.12 families (Debian 12's default 6.1.0-N, 6.12.N+deb12/+bpo/+deb13, Raspberry Pi OS 6.12.N+rpt-*, self-built 6.1.y and 6.12.y)"

// ModuleVersion is kernel/usbnet's DKMS package version (dkms.conf).
const ModuleVersion = "0.2"

// moduleRefusal says, as build.sh and dkms.conf do, why kernel k gets no
// module and what the user can do instead.
func moduleRefusal(k string) []string {
	if Has(k, "usbnet-bql") == datapath.Yes {
		bql := fact("usbnet-bql")
		out := []string{"# wirespeed's usbnet module (kernel/usbnet) is not for kernel " + k + ": Linux " + bql.Release +
			"+ has usbnet's BQL in tree; only the NAPI + GRO half is still missing upstream, and the module builds for " + ModuleKernelsText + " only"}
		if fix := fact("usbnet-bql-resume-fix"); Has(k, fix.Key) != datapath.Yes {
			out = append(out, "# if this device suspends (USB autosuspend, system sleep), check that kernel "+k+" carries \""+fix.Commit+
				"\" ("+fix.What+")")
		}
		return out
	}
	how := "boot a kernel of one of them (Debian 12's linux-image-amd64/-arm64 is 6.1) to use it"
	if piKernel(k) {
		how = "apt full-upgrade brings Raspberry Pi OS's current kernel (6.12.N+rpt-rpi-v8 / -rpi-2712 on bookworm, 6.1 on bullseye), which it builds for"
	}
	return []string{"# wirespeed's usbnet module (kernel/usbnet) does not apply to kernel " + k + ": it builds for " + ModuleKernelsText + "; " + how}
}

// piKernel: a Raspberry Pi OS (or Ubuntu raspi) kernel by its name:
// 6.12.N+rpt-rpi-v8, 6.1.21-v8+, 5.15.4-0-rpi4, 5.15.0-1034-raspi.
func piKernel(k string) bool {
	return strings.Contains(k, "rpi") || strings.Contains(k, "raspi") || strings.HasSuffix(k, "-v8+")
}
