// SPDX-License-Identifier: Apache-2.0

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

func (r Range) String() string {
	if r.To == "" {
		return r.From + " and later " + strings.Join(strings.SplitN(r.From, ".", 3)[:2], ".") + ".y"
	}
	return r.From + "-" + r.To
}

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
	{Key: "mt76u-threaded-napi", What: "mt76 USB WiFi (mt7921u, ...) receives through a threaded NAPI with GRO", Release: "7.3",
		Commit: `5323d3e50c20 "wifi: mt76: mt76u: use a threaded NAPI for the RX path"`,
		Source: "the commit, merged 2026-08-20 (wireless-next 2026-08-02, acked by mt76's maintainer 2026-06-09); the article \"Making USB WiFi 55% Faster on Linux: Threaded NAPI in the mt76 Driver\"; /work/shared/context.md, upstream since the last check",
		Note:   "the NAPI sits on a dummy netdev named mt76u-rx (kthread napi/mt76u-rx-<id>), and the mt76-usb-rx worker stays for the MCU queue"},
	{Key: "mt76-usb-reorder-regression", What: "mt76 on USB/SDIO skips RX reordering (the NPU/PPE active checks applied to non-MMIO devices): 20-71 TCP retransmits per 10 s on mt7921u, 0 after the fix",
		Release: "6.19", Commit: "141a81557070 (the change that made the checks apply to USB/SDIO)",
		Source: "the fix's commit message (7981aca2bd28), linux-wireless; /work/shared/context.md, upstream since the last check"},
	{Key: "mt76-usb-reorder-fix", What: "fix: mt76 restricts the NPU/PPE active checks to MMIO devices, so USB/SDIO reorder RX again",
		Commit: `7981aca2bd28 "wifi: mt76: restrict NPU/PPE active checks to MMIO devices"`,
		Source: "linux-wireless; in mainline and stable (/work/shared/context.md); the first release of each series that carries it was not checked",
		Note:   "no release is recorded, so whether a kernel of 6.19 or later has it is unknown: the finding says how to tell"},
	{Key: "udp-gso-corruption", What: "UDP GSO corrupts segmented datagrams on some drivers (heavy loss for WireGuard, Tailscale, QUIC)",
		Release: "7.0", Commit: "b10b446 (introduced the corruption)",
		Source: "the fixes 78effd8 and 5f17ae0 (netdev, stable 7.1.5); /work/shared/context.md, upstream since the last check",
		Note:   "workaround until the upgrade: ethtool -K IF tx-udp-segmentation off"},
	{Key: "udp-gso-corruption-fix", What: "fix of the UDP GSO corruption",
		// 7.1.5 carried 78effd8 + 5f17ae0; stable takes only what mainline
		// has, so 7.2 (released after 7.1.5's fixes were merged) has them.
		Release: "7.2", Commit: "78effd8, 5f17ae0",
		Source: "stable 7.1.5's changelog; /work/shared/context.md (7.0 - 7.1.4 affected, fixed 7.1.5)",
		Stable: []Range{{"7.1.5", ""}},
		Note:   "7.0.y has no recorded fix: distribution kernels of 7.0 (Ubuntu's) may carry a backport their version does not show"},
	{Key: "usbnet-bh-work", What: "usbnet's deferred RX/TX completion work runs as BH work (dev->bh_work) instead of a tasklet", Release: "6.17",
		Commit: `2c04d279e857 "net: usb: Convert tasklet API to new bottom half workqueue mechanism"`,
		Source: "the commit; /work/shared/context.md, upstream since the last check",
		Note:   "both run in softirq context on the CPU that queued them: the host controller's interrupt CPU"},
	{Key: "udp-gro-fwd-tunnels", What: "UDP GRO forwarding for forwarded UDP tunnel traffic: rx-udp-gro-forwarding on, rx-gro-list off", Release: "6.2",
		Source: "Tailscale's knowledge base, article 1320 (performance best practices: exit nodes and subnet routers on Linux 6.2+; tailscaled warns when it is off); /work/shared/context.md",
		Note:   "not persistent across reboots"},
}

// Distribution kernels: which kernel series each distribution release
// offers through which channel, how a host installs it, and where that
// was read. Rules ask what a host can reach through this table (never
// with a version of their own); checked 2026-11-25 (/work/shared/context.md,
// "The kernels users run"; Debian's package lists).
type DistroKernel struct {
	Distro  distro
	Release string // the distribution's release (os-release VERSION_ID); "" any
	Channel string // "bookworm", "trixie-backports", "HWE", "current"
	Series  string // the kernel series it ships ("7.3"); "" when closed
	// How installs it; ARCH stands for Debian's architecture name.
	How    string
	Closed string // when the channel closed ("2026-07-11"); "" open
	Source string
}

// DistroKernels is that table.
var DistroKernels = []DistroKernel{
	{Distro: distroDebian, Release: "12", Channel: "bookworm", Series: "6.1", How: "apt install linux-image-ARCH", Source: "Debian's package lists (linux-image-amd64 -> 6.1.0-N)"},
	{Distro: distroDebian, Release: "12", Channel: "bookworm-backports", Closed: "2026-07-11", Source: "Debian's backports announcements: bookworm-backports closed 2026-07-11"},
	{Distro: distroDebian, Release: "13", Channel: "trixie", Series: "6.12", How: "apt install linux-image-ARCH", Source: "Debian's package lists"},
	{Distro: distroDebian, Release: "13", Channel: "trixie-backports", Series: "7.3", How: "apt install -t trixie-backports linux-image-ARCH", Source: "Debian's package lists (7.3.4+deb13)"},
	{Distro: distroPiOS, Channel: "Raspberry Pi OS", Series: "6.18", How: "apt update && apt full-upgrade", Source: "Raspberry Pi OS's stable tag of 2026-05-27 (6.18.N+rpt-rpi-v8 / -rpi-2712)"},
	{Distro: distroUbuntu, Release: "24.04", Channel: "GA", Series: "6.8", How: "apt install linux-generic", Source: "Ubuntu's kernel release cycle"},
	{Distro: distroUbuntu, Release: "24.04", Channel: "HWE", Series: "7.0", How: "apt install --install-recommends linux-generic-hwe-24.04", Source: "Ubuntu 24.04's HWE kernel since 2026-07"},
	{Distro: distroUbuntu, Release: "26.04", Channel: "GA", Series: "7.0", How: "apt install linux-generic", Source: "Ubuntu 26.04 LTS"},
	{Distro: distroFedora, Channel: "updates", Series: "7.3", How: "dnf upgrade --refresh 'kernel*'", Source: "Fedora rebases its kernel to the current stable release (Fedora 44 shipped 7.0)"},
	{Distro: distroArmbian, Channel: "current", Series: "6.18", How: "armbian-config (System, Kernel: current)", Source: "Armbian's branches"},
	{Distro: distroArmbian, Channel: "edge", Series: "7.1", How: "armbian-config (System, Kernel: edge)", Source: "Armbian's branches"},
}

// wgMainlineStall is what is known of WireGuard's threaded-NAPI stall on
// mainline: the default stayed (only stable reverted it) and no mainline
// fix of the race was found (netdev archive, checked 2026-11-25;
// /work/shared/context.md, upstream since the last check).
const wgMainlineStall = "on mainline threaded NAPI stays WireGuard's default, and no mainline fix of the race was found (netdev archive, checked 2026-11-25)"

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
	open := r.To == "" // From and every later release of its series
	if !ok1 || !ok2 && !open || k.Major != lo.Major || k.Minor != lo.Minor {
		return false, true
	}
	if !k.PatchKnown {
		return false, false
	}
	return k.Patch >= lo.Patch && (open || k.Patch <= hi.Patch), true
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
// its dkms.conf: any kernel of the 6.1, 6.12 or 6.18 family or of the
// tested 7.x releases (7.0-7.3), whatever its name.
var ModuleKernels = regexp.MustCompile(`^(6\.1|6\.12|6\.18|7\.[0-3])\.[0-9]+([^0-9].*)?$`)

// ModuleKernelsText says the same for people.
const ModuleKernelsText = "the Linux 6.1, 6.12 and 6.18 families and the tested 7.x releases 7.0-7.3 (Debian 12's 6.1.0-N and 6.12.N+deb12/+bpo, Debian 13's 6.12.N+deb13 and trixie-backports' 7.3.N+deb13, Raspberry Pi OS 6.18.N+rpt-*, Armbian 6.18.N-current-*, Ubuntu 7.0.0-N-generic/-raspi, Fedora 7.x.N-NNN.fcNN, self-built ones)"

// ModuleVersion is kernel/usbnet's DKMS package version (dkms.conf).
const ModuleVersion = "0.3"

// piKernel: a Raspberry Pi OS (or Ubuntu raspi) kernel by its name:
// 6.12.N+rpt-rpi-v8, 6.1.21-v8+, 5.15.4-0-rpi4, 5.15.0-1034-raspi.
func piKernel(k string) bool {
	return strings.Contains(k, "rpi") || strings.Contains(k, "raspi") || strings.HasSuffix(k, "-v8+")
}

// Which distribution a host runs decides what doctor may tell it to do
// about its kernel: an Ubuntu host must never be told to boot Debian's.
// Snapshots do not record /etc/os-release, so the distribution is inferred
// from the kernel's name, conservatively: only names that only one
// distribution gives its kernels count, anything else is unknown. The
// finding says when its advice rests on that inference.

// distro is a distribution family doctor gives kernel advice for.
type distro int

const (
	distroUnknown distro = iota
	distroDebian
	distroPiOS
	distroUbuntu
	distroFedora
	distroArmbian
	distroOpenWrt
	distroProxmox
)

func (d distro) String() string {
	return [...]string{"an unknown distribution", "Debian", "Raspberry Pi OS", "Ubuntu", "Fedora", "Armbian", "OpenWrt", "Proxmox VE"}[d]
}

// hostDistro is what doctor knows of the host's distribution.
type hostDistro struct {
	Distro  distro
	Release string // "12", "13", "44"; "" when not known
	// Inferred: read from the kernel's name, not from the host.
	Inferred bool
	// Why says what it was read from, for the finding.
	Why string
}

var (
	debSuffix = regexp.MustCompile(`\+deb(\d+)(-|$)`)
	// Debian 12's 6.1 ABI names: 6.1.0-56-amd64, 6.1.0-28-cloud-arm64.
	debian61 = regexp.MustCompile(`^6\.1\.0-\d+-(cloud-|rt-)?(amd64|arm64|686|686-pae|armmp|armmp-lpae|marvell|rpi|powerpc64le|s390x|loong64|riscv64)$`)
	// Raspberry Pi OS: 6.18.20+rpt-rpi-v8, -rpi-2712; before 2023 6.1.21-v8+, -v7l+.
	piOSName = regexp.MustCompile(`\+rpt-rpi-|^\d+\.\d+\.\d+-v[678]l?\+$`)
	// Ubuntu's ABI names: 7.0.0-15-generic, 7.0.0-1012-raspi.
	ubuntuName = regexp.MustCompile(`^\d+\.\d+\.\d+-\d+-(generic|generic-64k|lowlatency|raspi)$`)
	fedoraName = regexp.MustCompile(`\.fc(\d+)\.[a-z0-9_]+$`)
	// Armbian's branches: 6.18.8-current-rockchip64, 7.1.2-edge-bcm2711.
	armbianName = regexp.MustCompile(`^\d+\.\d+\.\d+-(current|edge|bleedingedge|legacy|vendor)-[a-z0-9]+$`)
)

// distroOf says which distribution the snapshot's host runs, as far as its
// kernel's name tells.
func distroOf(kernel string) hostDistro {
	h := hostDistro{Inferred: true, Why: "inferred from the kernel name " + kernel}
	switch {
	case piOSName.MatchString(kernel):
		h.Distro = distroPiOS
	case pveName.MatchString(kernel):
		h.Distro = distroProxmox
	case debSuffix.MatchString(kernel):
		h.Distro, h.Release = distroDebian, debSuffix.FindStringSubmatch(kernel)[1]
	case strings.Contains(kernel, "+bpo-"):
		// bookworm-backports named its kernels +bpo; trixie-backports +deb13
		h.Distro = distroDebian
		if k, ok := ParseKernel(kernel); ok && k.Major == 6 {
			h.Release = "12"
		}
	case debian61.MatchString(kernel):
		h.Distro, h.Release = distroDebian, "12"
	case ubuntuName.MatchString(kernel):
		h.Distro = distroUbuntu
	case fedoraName.MatchString(kernel):
		h.Distro, h.Release = distroFedora, fedoraName.FindStringSubmatch(kernel)[1]
	case armbianName.MatchString(kernel):
		h.Distro = distroArmbian
	default:
		h.Why = "not known: the snapshot does not record it and the kernel name " + kernel + " does not tell"
	}
	return h
}

// label: "Ubuntu (inferred from the kernel name 7.0.0-15-generic)".
func (h hostDistro) label() string {
	name := h.Distro.String()
	if h.Distro == distroDebian && h.Release != "" {
		name += " " + h.Release
	}
	if (h.Distro == distroFedora || h.Distro == distroUbuntu) && h.Release != "" {
		name += " " + h.Release
	}
	if h.Distro == distroUnknown {
		return name
	}
	if h.Inferred {
		return name + " (" + h.Why + ")"
	}
	return name
}

// debArch: Debian's architecture name in a Debian kernel flavour, else
// the snapshot's.
func debArch(kernel, arch string) string {
	for _, a := range []string{"arm64", "amd64", "686"} {
		if strings.HasSuffix(kernel, "-"+a) {
			if a == "686" {
				return "686"
			}
			return a
		}
	}
	switch arch {
	case "aarch64", "arm64":
		return "arm64"
	}
	return "amd64"
}

// newerThanTested: Linux 7.4 and later, past the tested 7.x releases.
func newerThanTested(k Kernel) bool {
	return k.Major > 7 || k.Major == 7 && k.Minor >= 4
}

// supportedKernelHow says how a host of distribution h reaches a kernel
// the module builds for. It never names another distribution's kernel.
func supportedKernelHow(h hostDistro, kernel, arch string) string {
	k, _ := ParseKernel(kernel)
	ser := func(rel, channel string) string { return chanSeries(h.Distro, rel, channel) }
	switch h.Distro {
	case distroDebian:
		a := debArch(kernel, arch)
		switch h.Release {
		case "12":
			return "on Debian 12, linux-image-" + a + " is " + ser("12", "bookworm") + ", a supported family (bookworm-backports closed " + chanClosed(distroDebian, "12", "bookworm-backports") +
				"): apt install linux-image-" + a + ", then reboot into it"
		case "13":
			return "on Debian 13, trixie's linux-image-" + a + " (" + ser("13", "trixie") + ") and trixie-backports' " + ser("13", "trixie-backports") +
				" are supported: apt install -t trixie-backports linux-image-" + a + ", then reboot into it"
		}
		return "Debian 13's kernel (" + ser("13", "trixie") + ") and trixie-backports' " + ser("13", "trixie-backports") + " are supported families"
	case distroPiOS:
		return "apt full-upgrade brings Raspberry Pi OS's current kernel (" + ser("", "Raspberry Pi OS") + ".N+rpt-rpi-v8 / -rpi-2712), which it builds for"
	case distroUbuntu:
		hwe := ser("24.04", "HWE")
		if (h.Release == "" || h.Release == "24.04") && k.Series() == ser("24.04", "GA") && strings.HasSuffix(kernel, "-generic") {
			return "on Ubuntu 24.04 the HWE kernel is " + hwe + ", a supported family: apt install --install-recommends linux-generic-hwe-24.04, then reboot into it"
		}
		s := "Ubuntu 24.04's HWE kernel and Ubuntu 26.04 LTS's kernel are " + hwe + ", a supported family"
		if h.Release != "" && h.Release != "24.04" && h.Release != "26.04" {
			s += " (after a release upgrade: do-release-upgrade)"
		}
		return s
	case distroFedora:
		return "Fedora keeps earlier kernels installed: boot a 7.0-7.3 one from the boot menu if one is still there (rpm -q kernel lists them)"
	case distroArmbian:
		return "armbian-config (System, Kernel) switches to Armbian's current branch (" + ser("", "current") + ") or edge (" + ser("", "edge") + "), both supported"
	}
	return "with a kernel of one of them, build.sh takes usbnet's source from linux-source-X.Y or kernel.org, or from your own tree of that X.Y: KSRC=DIR dkms install ..."
}

// chanSeries is the kernel series a distribution channel ships (the
// DistroKernels table); a missing row is a programming error.
func chanSeries(d distro, rel, channel string) string {
	for _, c := range DistroKernels {
		if c.Distro == d && c.Release == rel && c.Channel == channel {
			return c.Series
		}
	}
	panic("doctor: no distribution kernel " + d.String() + " " + rel + " " + channel)
}

// chanClosed is when a distribution channel closed.
func chanClosed(d distro, rel, channel string) string {
	for _, c := range DistroKernels {
		if c.Distro == d && c.Release == rel && c.Channel == channel {
			return c.Closed
		}
	}
	panic("doctor: no distribution kernel " + d.String() + " " + rel + " " + channel)
}

// moduleRefusal says, as build.sh and dkms.conf do, why kernel k gets no
// module and what the user of this distribution can do instead.
func moduleRefusal(k string, h hostDistro, arch string) []string {
	kk, ok := ParseKernel(k)
	how := supportedKernelHow(h, k, arch)
	var out []string
	newer := ok && newerThanTested(kk)
	if newer {
		out = append(out, fmt.Sprintf("# wirespeed's usbnet module (kernel/usbnet) is not built for kernel %s: Linux %s is newer than the 7.x releases it is tested on (7.0, 7.1, 7.2, 7.3), and untested kernels get no KSRC override; wait for a wirespeed release that lists %s, or boot a tested kernel: %s", k, kk.Series(), kk.Series(), ModuleKernelsText))
		if h.Distro != distroUnknown {
			out = append(out, "# "+how)
		}
	}
	if Has(k, "usbnet-bql") == datapath.Yes {
		bql := fact("usbnet-bql")
		if newer {
			out = append(out, "# until then its in-tree usbnet has BQL (Linux "+bql.Release+"+); only the NAPI + GRO half is still missing upstream")
		} else {
			out = append(out, "# wirespeed's usbnet module (kernel/usbnet) is not for kernel "+k+": Linux "+bql.Release+
				"+ has usbnet's BQL in tree; only the NAPI + GRO half is still missing upstream, and the module builds for "+ModuleKernelsText+" only; "+how)
		}
		if fix := fact("usbnet-bql-resume-fix"); Has(k, fix.Key) != datapath.Yes {
			out = append(out, "# if this device suspends (USB autosuspend, system sleep), check that kernel "+k+" carries \""+fix.Commit+
				"\" ("+fix.What+")")
		}
		return out
	}
	return append(out, "# wirespeed's usbnet module (kernel/usbnet) does not apply to kernel "+k+": it builds for "+ModuleKernelsText+"; "+how)
}

// moduleNotes: what a host of distribution h needs to know when the
// module builds for its kernel k: where the headers and the source come
// from.
func moduleNotes(k string, h hostDistro) []string {
	switch h.Distro {
	case distroDebian:
		return []string{"# headers: apt install linux-headers-" + k + "; usbnet's source: linux-source-X.Y from Debian's archive (6.1, 6.12, 7.2, 7.3), else kernel.org's release (network needed)"}
	case distroPiOS:
		return []string{"# Raspberry Pi OS: apt install linux-headers-" + k + " (apt full-upgrade keeps the kernel current, and DKMS rebuilds the module for each new one); usbnet's source: linux-source-X.Y from Debian's archive where it has one (6.1, 6.12), else kernel.org's release of the kernel's version (network needed)"}
	case distroUbuntu:
		return []string{"# Ubuntu: apt install linux-headers-" + k + " dkms; its X.Y.0-N name does not carry the patch level: build.sh reads the upstream release from /proc/version_signature (the running kernel) and fetches it from kernel.org (network needed)"}
	case distroFedora:
		return []string{"# Fedora: dnf install kernel-devel-" + k + " dkms; usbnet's source: kernel.org's release of the kernel's version (network needed)"}
	case distroArmbian:
		hdr := "linux-headers-BRANCH-FAMILY"
		if b, fam, ok := armbianBranch(k); ok {
			hdr = "linux-headers-" + b + "-" + fam
		}
		return []string{"# Armbian: apt install " + hdr + " (or armbian-config, Kernel headers); usbnet's source: kernel.org's release of the kernel's version (network needed)"}
	}
	return []string{"# usbnet's source: linux-source-X.Y if installed or in apt's archive, else kernel.org's release (network needed), or your own tree: KSRC=DIR dkms install ..."}
}
