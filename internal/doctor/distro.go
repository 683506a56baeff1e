// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// What a host can do about its kernel depends on its distribution and
// release. A snapshot that carries /etc/os-release (inspect's host.os)
// says so; an older one leaves doctor to infer it from the kernel's name
// (distroOf), and every finding whose advice rests on that inference says
// what it assumed.

// hostDistroOf is what doctor knows of the snapshot's distribution.
func hostDistroOf(s *inspect.Snapshot) hostDistro {
	k := s.Host.Kernel
	o := s.Host.OS
	if ow := s.Host.OpenWrt; ow != nil {
		return hostDistro{Distro: distroOpenWrt, Release: ow.Release, Why: "from /etc/openwrt_release: OpenWrt " + ow.Release + " (" + ow.Target + ")"}
	}
	if o == nil {
		return distroOf(k)
	}
	name := o.PrettyName
	if name == "" {
		name = strings.TrimSpace(o.ID + " " + o.VersionID)
	}
	h := hostDistro{Release: o.VersionID, Why: "from " + o.File + ": " + name}
	like := func(id string) bool {
		if o.ID == id {
			return true
		}
		for _, l := range o.IDLike {
			if l == id {
				return true
			}
		}
		return false
	}
	switch {
	case o.RPiIssue || o.ID == "raspbian" || o.ID == "debian" && piOSName.MatchString(k):
		// Raspberry Pi OS's 64-bit images say ID=debian: /etc/rpi-issue
		// or its kernel's name tells them apart
		h.Distro = distroPiOS
		if o.RPiIssue {
			h.Why += " and /etc/rpi-issue"
		} else if o.ID == "debian" {
			h.Why += ", and the kernel name " + k + " is Raspberry Pi OS's"
		}
	case o.ID == "openwrt":
		h.Distro = distroOpenWrt
	case o.ID == "debian" && pveName.MatchString(k):
		// Proxmox VE's os-release says Debian; its kernels are its own
		h.Distro = distroProxmox
		h.Why += ", and the kernel name " + k + " is Proxmox VE's"
	case (o.ID == "debian" || o.ID == "ubuntu") && armbianName.MatchString(k):
		h.Distro, h.Release = distroArmbian, ""
		h.Why += ", and the kernel name " + k + " is Armbian's"
	case o.ID == "debian":
		h.Distro = distroDebian
	case o.ID == "ubuntu":
		h.Distro = distroUbuntu
	case o.ID == "fedora":
		h.Distro = distroFedora
	case o.ID == "armbian" || like("armbian"):
		h.Distro, h.Release = distroArmbian, ""
	default:
		h.Why = "not one doctor has kernel advice for (" + h.Why + ")"
	}
	return h
}

// channels lists the distribution kernels a host of h can install.
func channels(h hostDistro) []DistroKernel {
	var out []DistroKernel
	for _, d := range DistroKernels {
		if d.Distro == h.Distro && (d.Release == "" || h.Release == "" || d.Release == h.Release) {
			out = append(out, d)
		}
	}
	return out
}

// reachAdvice says how a host of distribution h reaches a kernel for which
// has answers Yes (what names the change: "the mt76u threaded NAPI"). It
// names only this distribution's kernels; for an unknown one, the release
// to look for.
func reachAdvice(h hostDistro, kernel, arch, what string, first string, has func(series string) datapath.State) []string {
	a := debArch(kernel, arch)
	var ok, closed, without []string
	for _, c := range channels(h) {
		var label string
		if c.Release != "" && c.Distro != distroPiOS {
			label = h.Distro.String() + " " + c.Release + "'s " + c.Channel
		} else {
			label = h.Distro.String() + "'s " + c.Channel
		}
		if c.Series == "" {
			closed = append(closed, label+" closed "+c.Closed)
			continue
		}
		how := strings.ReplaceAll(c.How, "ARCH", a)
		switch has(c.Series) {
		case datapath.Yes:
			ok = append(ok, label+" ("+c.Series+") has it: "+how)
		default:
			without = append(without, label+" ("+c.Series+")")
		}
	}
	var out []string
	switch {
	case h.Distro == distroUnknown:
		return []string{"# " + what + " needs Linux " + first + " or later; the distribution is " + h.label() + ", so how this host gets such a kernel is not said here"}
	case len(ok) > 0:
		for _, s := range ok {
			out = append(out, "# on "+h.label()+": "+s)
		}
		if h.Distro != distroFedora && h.Distro != distroPiOS {
			out = append(out, "# then reboot into it")
		}
	default:
		s := "# " + what + " needs Linux " + first + " or later, and no kernel of " + h.label() + " has it yet"
		if len(without) > 0 {
			s += " (" + strings.Join(without, ", ") + ")"
		}
		out = append(out, s)
	}
	for _, c := range closed {
		out = append(out, "# "+c+": no newer kernel comes from there")
	}
	if len(ok) == 0 && h.Distro == distroDebian && h.Release != "" {
		// a newer Debian release may have it
		for _, c := range DistroKernels {
			if c.Distro == distroDebian && c.Release > h.Release && c.Series != "" && has(c.Series) == datapath.Yes {
				out = append(out, "# Debian "+c.Release+"'s "+c.Channel+" ("+c.Series+") has it, after an upgrade to Debian "+c.Release)
				break
			}
		}
	}
	return out
}

// hasSeries adapts Has to a kernel series ("7.3"): its first release.
func hasSeries(key string) func(string) datapath.State {
	return func(series string) datapath.State { return Has(series+".0", key) }
}

// distroAssumed is the Unchecked line of a finding whose advice rests on
// the distribution: what it assumed, or that it could not tell.
func distroAssumed(h hostDistro) []string {
	if h.Distro == distroUnknown {
		return []string{"the distribution (" + h.Why + "): the advice names kernel releases, not how this host gets one"}
	}
	if h.Inferred {
		return []string{"the distribution: assumed " + h.label() + "; an inspect --save of this version records /etc/os-release"}
	}
	return nil
}
