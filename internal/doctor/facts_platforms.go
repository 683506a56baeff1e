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
// Each Source names where the fact was checked (a URL, or repository,
// path and commit); what could not be checked says so, and no advice
// rests on it.
var PlatformFacts = []PlatformFact{
	{Key: "openwrt-modules", What: "an out-of-tree module for OpenWrt is a kmod package built with the OpenWrt SDK of the same release and target, and installed with its package manager; kmod packages depend on their release's exact kernel",
		Source: "https://openwrt.org/docs/guide-developer/toolchain/using_the_sdk (\"compile custom software for a specific release while ensuring binary and feature compatibility\"); https://openwrt.org/docs/guide-user/additional-software/opkg (kmod packages and the kernel version). " +
			"Not checked against a primary source: that no DKMS package or kernel build tree exists for the device (a gcc package does: openwrt/packages devel/gcc); the advice does not rest on it, it only offers the SDK"},
	{Key: "openwrt-pkg", What: "OpenWrt installs packages with opkg up to 24.10 and with apk (Alpine's apk-tools) from 25.12; snapshots use apk",
		Source: "OpenWrt 25.12.0 release notes, \"Switch package manager from opkg to apk\" (https://openwrt.org/releases/25.12/notes-25.12.0; copy checked: github.com/codetiger666/openwrt/releases/tag/v25.12.0-rc5)"},
	{Key: "openwrt-kernels", What: "OpenWrt 24.10 runs Linux 6.6 and OpenWrt 25.12 Linux 6.12 (the release branches' kernel; a snapshot's own kernel name is what doctor checks)",
		Source: "openwrt/openwrt pull requests on the release branches: #22752 \"[24.10] kernel: bump 6.6 to 6.6.130\", #23162 \"[25.12]: kernel: bump 6.12 to 6.12.84\""},
	{Key: "openwrt-packet-steering", What: "network.@globals[0].packet_steering: 0 off (rps_cpus 0 and NAPI threads on every CPU), 1 or unset on (per device, NAPI threads pinned to one CPU and RPS to another, the least loaded), 2 RPS over all CPUs; steering_flows sets rps_flow_cnt. " +
		"It writes the rx queues of devices with a device link and no lower device (a DSA port's conduit, not the port), and moves no interrupt",
		Source: "openwrt/openwrt package/network/config/netifd/files/etc/init.d/packet_steering @7ebcf2fb9c5db8b75666761f5e767c91abb1f437 (reload triggers: network and firewall config, every interface event) and " +
			"files/usr/libexec/network/packet-steering.uc @0a1e9ecd444c8f74ff333699cc04a996558736c3 (only \"0\" disables, \"2\" all CPUs; writes rps_cpus, rps_flow_cnt and taskset, never /proc/irq); unset is \"Enabled\": nbd168 in openwrt/openwrt#19369"},
	{Key: "openwrt-irqbalance", What: "OpenWrt images run no irqbalance: it is a package of the packages feed, disabled in /etc/config/irqbalance until enabled; /proc/irq/N/smp_affinity writes last until reboot, so OpenWrt keeps them in /etc/rc.local (run at the end of boot)",
		Source: "openwrt/packages utils/irqbalance/files/irqbalance.config @3b3fa868590cd22752737af0716c0fe6b68bdbdd (option enabled '0'); openwrt/openwrt package/base-files/files/etc/init.d/done @0940db5e2e3b0c227ee79200b99fe31db0ebc452 (START=95: sh /etc/rc.local at boot)"},
	{Key: "openwrt-mt76", What: "on OpenWrt mt76 is a package of its own (kmod-mt76-*), built from the openwrt/mt76 tree, not the kernel's drivers/net/wireless/mediatek/mt76",
		Source: "openwrt/openwrt package/kernel/mt76/Makefile (PKG_SOURCE_URL https://github.com/openwrt/mt76)"},
	{Key: "proxmox-kernel", What: "Proxmox VE ships its own kernels, named X.Y.Z-N-pve, under an os-release that says Debian: proxmox-kernel-X.Y and proxmox-headers-X.Y (proxmox-headers-X.Y.Z-N-pve for one kernel) since July 2023 (Proxmox VE 8, kernel 6.2.16); pve-kernel-* and pve-headers-* before",
		Source: "pve-devel, F. Grünbichler, \"[PATCH 2/2] integrate meta packages and change prefix\", 2023-07-18 (https://lists.proxmox.com/pipermail/pve-devel/2023-July/058197.html); a Proxmox VE 8.3 pveversion -v listing proxmox-kernel-6.8 and proxmox-kernel-6.8.12-5-pve-signed"},
	{Key: "vendor-bsp", What: "Armbian's vendor branch is the SoC vendor's tree, not upstream X.Y (rk35xx and rockchip-rk3588: armbian/linux-rockchip rk-6.1-rkr5.1, kernel X.Y.Z-vendor-rk35xx): a module for it is built against that tree; the legacy branch is a vendor tree on some families and a mainline LTS on others (sunxi, mvebu, imx6, uefi), so legacy alone says nothing",
		Source: "armbian/build @82a0c923f91f75211cade3ee703fc06372c840e5 config/sources/families/rk35xx.conf and rockchip-rk3588.conf (vendor, legacy), include/sunxi64_common.inc, mvebu.conf (legacy: mainline)"},
	{Key: "armbian-headers", What: "Armbian's kernels are named X.Y.Z-BRANCH-FAMILY and their header packages linux-headers-BRANCH-FAMILY (linux-headers-current-rockchip64, linux-headers-vendor-rk35xx); the headers install to /usr/src/linux-headers-X.Y.Z-BRANCH-FAMILY with the modules' build link",
		Source: "armbian/build @82a0c923f91f75211cade3ee703fc06372c840e5 lib/functions/compilation/kernel-make.sh (LOCALVERSION=-${BRANCH}-${LINUXFAMILY}) and kernel-debs.sh (create_kernel_deb \"linux-headers-${BRANCH}-${LINUXFAMILY}\", the build symlink)"},
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
	armbianParts = regexp.MustCompile(`^\d+\.\d+\.\d+-(current|edge|bleedingedge|legacy|vendor)-([a-z0-9]+)$`)
)

// armbianBranch returns the branch and family in an Armbian kernel name.
func armbianBranch(kernel string) (branch, family string, ok bool) {
	m := armbianParts.FindStringSubmatch(kernel)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// vendorBSP: a vendor's BSP kernel by its name - Armbian's vendor branch
// (vendor-bsp); its legacy branch is a vendor tree on some families and a
// mainline LTS on others, so it does not count.
func vendorBSP(kernel string) bool {
	b, _, ok := armbianBranch(kernel)
	return ok && b == "vendor"
}
