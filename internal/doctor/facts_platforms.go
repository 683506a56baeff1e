// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"regexp"
	"strings"
)

// Platform facts: how distributions whose way of doing things differs
// from Debian's install kernels, headers and out-of-tree modules, and who
// owns the knobs there. The second half of the facts table (facts.go holds
// the kernel's); every source is named so a user can look it up.

// PlatformFact is one such fact.
type PlatformFact struct {
	Key    string
	What   string
	Source string
}

// PlatformFacts is that table; rules look facts up with platformFact().
var PlatformFacts = []PlatformFact{
	{Key: "openwrt-modules", What: "OpenWrt images carry no DKMS, kernel headers or compiler: an out-of-tree module is a kmod package built with the OpenWrt SDK of the same release and target",
		Source: "OpenWrt's documentation: \"Using the SDK\" and \"Creating packages\" (openwrt.org/docs/guide-developer); kmod packages are tied to the exact kernel of their release"},
	{Key: "openwrt-pkg", What: "OpenWrt installs packages with opkg up to 24.10 and with apk (Alpine's apk-tools) from 25.12",
		Source: "OpenWrt forum, \"Major change notice: new package manager\" (2024-11); LWN 998446"},
	{Key: "openwrt-kernels", What: "OpenWrt 24.10 runs Linux 6.6, OpenWrt 25.12 Linux 6.12",
		Source: "OpenWrt's release notes of 24.10 and 25.12; /work/shared/context.md (the kernels users run)"},
	{Key: "openwrt-packet-steering", What: "network.@globals[0].packet_steering: 0 off (the service writes rps_cpus 0 on every device), 1 on (one CPU per device, NAPI threads pinned), 2 RPS over all CPUs; steering_flows sets rps_flow_cnt",
		Source: "openwrt/openwrt package/network/config/netifd: files/etc/init.d/packet_steering (reloaded on every network reload and interface event) and files/usr/libexec/network/packet-steering.uc"},
	{Key: "openwrt-mt76", What: "on OpenWrt mt76 is a package of its own (kmod-mt76-*), built from the mt76 tree, not the kernel's drivers/net/wireless/mediatek/mt76",
		Source: "openwrt/openwrt package/kernel/mt76/Makefile"},
	{Key: "proxmox-kernel", What: "Proxmox VE ships its own kernels as proxmox-kernel-X.Y packages with proxmox-headers-X.Y (pve-kernel-* and pve-headers-* before Proxmox VE 8); its os-release says Debian, its kernels end in -pve",
		Source: "Proxmox VE documentation, \"Proxmox VE Kernel\" and the opt-in kernel announcements on forum.proxmox.com"},
	{Key: "vendor-bsp", What: "a vendor BSP kernel (Armbian's vendor branch: Rockchip's X.Y.Z-vendor-rk35xx) is the SoC vendor's tree, not upstream X.Y: its drivers differ, so a module for it is built from that tree",
		Source: "Armbian's documentation, kernel branches (legacy/vendor: the board vendor's kernel; current/edge: mainline-based)"},
	{Key: "armbian-headers", What: "Armbian's kernel header packages are named linux-headers-BRANCH-FAMILY (linux-headers-current-rockchip64, linux-headers-vendor-rk35xx), from its kernel name X.Y.Z-BRANCH-FAMILY",
		Source: "Armbian's documentation (armbian-config, Kernel headers) and its apt repository apt.armbian.com"},
}

var platformIndex = func() map[string]*PlatformFact {
	m := map[string]*PlatformFact{}
	for i := range PlatformFacts {
		m[PlatformFacts[i].Key] = &PlatformFacts[i]
	}
	return m
}()

// platformFact returns the fact with key; an unknown key is a programming
// error.
func platformFact(key string) *PlatformFact {
	f := platformIndex[key]
	if f == nil {
		panic("doctor: no platform fact " + key)
	}
	return f
}

// OpenWrtKernels: the kernel series of OpenWrt's releases (openwrt-kernels).
var OpenWrtKernels = []struct{ Release, Series string }{{"24.10", "6.6"}, {"25.12", "6.12"}}

// openWrtPkg is the package manager of an OpenWrt release ("24.10.4",
// "25.12.0", "SNAPSHOT").
func openWrtPkg(release string) string {
	if k, ok := ParseKernel(release); ok && (k.Major > 25 || k.Major == 25 && k.Minor >= 12) {
		return "apk"
	}
	if strings.HasPrefix(release, "SNAPSHOT") {
		return "apk"
	}
	return "opkg"
}

var (
	// Proxmox VE's kernels: 6.8.12-4-pve.
	pveName = regexp.MustCompile(`^\d+\.\d+\.\d+-\d+-pve$`)
	// Armbian's kernel name: X.Y.Z-BRANCH-FAMILY.
	armbianParts = regexp.MustCompile(`^\d+\.\d+\.\d+-(current|edge|legacy|vendor)-([a-z0-9]+)$`)
)

// armbianBranch returns the branch and family in an Armbian kernel name.
func armbianBranch(kernel string) (branch, family string, ok bool) {
	m := armbianParts.FindStringSubmatch(kernel)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// vendorBSP: a vendor's BSP kernel by its name (Armbian's vendor and legacy
// branches).
func vendorBSP(kernel string) bool {
	b, _, ok := armbianBranch(kernel)
	return ok && (b == "vendor" || b == "legacy")
}
