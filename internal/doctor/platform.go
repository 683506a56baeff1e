// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Advice on platforms whose way of doing things differs from the Debian
// family's (facts_platforms.go): OpenWrt (no DKMS, headers or compiler;
// kmod packages from the SDK; RPS owned by its packet steering service),
// Proxmox VE (its own proxmox-kernel packages under a Debian os-release),
// vendor BSP kernels (a module needs the BSP's own tree) and Armbian
// (header packages named by branch and family).

// platformModule is the install advice for wirespeed's usbnet module on
// such a platform, and its caveat; ok is false elsewhere (usbnetFix's own
// advice holds).
func platformModule(s *inspect.Snapshot, d *inspect.Device, h hostDistro) (cmds []string, caveat string, ok bool) {
	k := s.Host.Kernel
	fits := ModuleKernels.MatchString(k)
	switch {
	case h.Distro == distroOpenWrt:
		return openWrtModule(s, h, fits), "A kmod package replaces usbnet and every minidriver on it; removing it (opkg remove, or apk del from 25.12) goes back to the image's modules.", true
	case h.Distro == distroProxmox:
		pf := platformFact("proxmox-kernel")
		if fits {
			// the headers' name depends on when the kernel was built
			// (proxmox-kernel): try the new name, then the old
			return []string{"# Proxmox VE (" + pf.What + "):",
				"apt install dkms proxmox-headers-" + k + " || apt install dkms pve-headers-" + k,
				"cp -r kernel/usbnet /usr/src/wirespeed-usbnet-" + ModuleVersion + " && dkms install wirespeed-usbnet/" + ModuleVersion,
				fmt.Sprintf("modprobe -r %s usbnet && modprobe %s", d.Driver, d.Driver)}, "", true
		}
		return []string{"# wirespeed's usbnet module (kernel/usbnet) does not apply to kernel " + k + ": it builds for " + ModuleKernelsText,
			"# Proxmox VE installs its kernels as proxmox-kernel-X.Y with proxmox-headers-X.Y, never Debian's linux-image-*; list the series this release offers:",
			"apt list 'proxmox-kernel-*'",
			"# with a series of those families: apt install proxmox-kernel-X.Y proxmox-headers-X.Y, reboot into it, then install the module with DKMS"}, "", true
	case vendorBSP(k):
		b, fam, _ := armbianBranch(k)
		vf, hf := platformFact("vendor-bsp"), platformFact("armbian-headers")
		out := []string{"# kernel " + k + " is a vendor BSP kernel (Armbian branch " + b + ", family " + fam + "): " + vf.What,
			"# headers (" + hf.What + "): apt install linux-headers-" + b + "-" + fam}
		if !fits {
			out = append(out, "# and its version is not one the module builds for ("+ModuleKernelsText+")")
			return out, "", true
		}
		out = append(out, "# build with the BSP's own source tree (not upstream's usbnet): cp -r kernel/usbnet /usr/src/wirespeed-usbnet-"+ModuleVersion+
			" && KSRC=/path/to/the/bsp/tree dkms install wirespeed-usbnet/"+ModuleVersion,
			fmt.Sprintf("# then: modprobe -r %s usbnet && modprobe %s", d.Driver, d.Driver))
		return out, "", true
	}
	return nil, "", false
}

// openWrtModule: OpenWrt builds modules as kmod packages with its SDK.
func openWrtModule(s *inspect.Snapshot, h hostDistro, fits bool) []string {
	k := s.Host.Kernel
	mf, pf := platformFact("openwrt-modules"), platformFact("openwrt-pkg")
	target := "this target"
	if ow := s.Host.OpenWrt; ow != nil && ow.Target != "" {
		target = ow.Target
	}
	rel := h.Release
	if rel == "" {
		rel = "this release"
	}
	out := []string{"# OpenWrt: " + mf.What + " (" + mf.Source + "); " + pf.What}
	if fits {
		return append(out, "# build kernel/usbnet as a kmod package with the SDK of OpenWrt "+rel+" for "+target+", copy it to the router and install it with "+openWrtPkg(rel))
	}
	out = append(out, "# wirespeed's usbnet module (kernel/usbnet) does not build for kernel "+k+" (OpenWrt "+rel+"'s): it builds for "+ModuleKernelsText)
	for _, r := range OpenWrtKernels {
		if ModuleKernels.MatchString(r.Series + ".0") {
			out = append(out, "# OpenWrt "+r.Release+" runs Linux "+r.Series+", a family it builds for: after a sysupgrade to "+r.Release+
				", build it as a kmod package with "+r.Release+"'s SDK for "+target+" and install it with "+openWrtPkg(r.Release+".0"))
			break
		}
	}
	return out
}

// openWrtRPSFix: on OpenWrt the packet steering service owns rps_cpus - it
// rewrites every device's mask on each network reload (0 everywhere when
// packet_steering is 0) - so the fix is its setting, not a sysfs write
// that the next reload undoes. No tune actions: tune's writes would be
// reverted the same way.
func openWrtRPSFix(s *inspect.Snapshot, d *inspect.Device) *Fix {
	ow := s.Host.OpenWrt
	pf := platformFact("openwrt-packet-steering")
	sec := "@globals[0]"
	if ow.Globals != "" {
		sec = ow.Globals
	}
	now := ow.PacketSteering
	if now == "" {
		now = "unset"
	}
	fix := &Fix{Commands: []string{
		"uci set network." + sec + ".packet_steering=1",
		"uci commit network",
		"/etc/init.d/packet_steering reload",
	}, Caveat: "OpenWrt's packet steering (" + pf.Source + ") owns rps_cpus: " + pf.What + ". packet_steering is " + now +
		" here, so a mask written to " + d.Name + "'s rps_cpus lasts only until the next network reload. With 1 it puts " + d.Name +
		"'s RPS on one CPU, other than its NAPI thread's where NAPI is threaded (it does not look at the interrupt's CPU); 2 spreads RPS over every CPU. " +
		"The reload rewrites the masks without restarting the network."}
	if !ow.NetworkConfig {
		fix.Caveat += " /etc/config/network was not in the snapshot: check that it has a globals section (uci show network.@globals[0])."
	}
	if big, why := bigCPUs(s, onlineCPUs(s)); why != "" {
		fix.Caveat += " The CPUs differ in capacity and packet steering balances by load, not capacity: check that it put " + d.Name +
			"'s RPS on one of CPUs " + cpumask.FormatList(big) + " (the biggest)."
	}
	return fix
}

// openWrtIRQNote: on OpenWrt an interrupt's affinity is kept by a line in
// /etc/rc.local (run at the end of boot), not by tune persist (systemd
// units) or Debian's irqbalance settings; irqbalance is a package there,
// off until enabled, and the packet steering service moves no interrupt
// (openwrt-irqbalance, openwrt-packet-steering).
func openWrtIRQNote(f *Finding) {
	ib := platformFact("openwrt-irqbalance")
	var keep []string
	for _, c := range f.Fix.Commands {
		if !strings.HasPrefix(c, "#") {
			keep = append(keep, c)
		}
	}
	if len(keep) > 0 {
		f.Fix.Commands = append(f.Fix.Commands, "# to keep it after a reboot, add to /etc/rc.local before its exit 0: "+strings.Join(keep, "; "))
	}
	f.Fix.Caveat = "On OpenWrt: " + ib.What + " (" + ib.Source + "). Where the irqbalance package is installed and enabled, list these IRQs as banirq in /etc/config/irqbalance. " +
		"OpenWrt's packet steering sets rps_cpus and pins threaded NAPI, but moves no interrupt: it neither undoes nor replaces this."
}
