// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/hostfs"
)

// What a host's platform says about who owns the knobs doctor would turn:
// OpenWrt's own release file and network configuration (its packet
// steering service rewrites rps_cpus), and the running services that set
// IRQ affinity, sysctls, governors or RPS themselves. Snapshots of
// format version 1 carry none of it: the fields stay nil and doctor says
// what it could not check.

// OpenWrt is what /etc/openwrt_release and /etc/config/network say.
type OpenWrt struct {
	Release  string `json:"release,omitempty"`  // DISTRIB_RELEASE: "24.10.4", "25.12.0", "SNAPSHOT"
	Revision string `json:"revision,omitempty"` // DISTRIB_REVISION: "r28959-29397011cc"
	Target   string `json:"target,omitempty"`   // DISTRIB_TARGET: "ramips/mt7621"
	Arch     string `json:"arch,omitempty"`     // DISTRIB_ARCH: "mipsel_24kc" (the SDK's and packages' architecture)
	// Globals is the name of /etc/config/network's globals section
	// ("globals"; "" when it is anonymous or missing, then uci addresses it
	// as @globals[0]).
	Globals string `json:"globals_section,omitempty"`
	// PacketSteering is its packet_steering option as written ("0", "1",
	// "2"); "" when unset. SteeringFlows is steering_flows.
	PacketSteering string `json:"packet_steering,omitempty"`
	SteeringFlows  string `json:"steering_flows,omitempty"`
	// NetworkConfig: /etc/config/network could be read.
	NetworkConfig bool `json:"network_config"`
}

// Service is a running service that owns a knob doctor might turn.
type Service struct {
	Name string `json:"name"` // the process name: "irqbalance", "tuned", "netifd"
	Owns string `json:"owns"` // what it sets
}

// knobOwners are the services that set what doctor's fixes set, and what.
var knobOwners = []Service{
	{"irqbalance", "IRQ affinity (moves IRQs that tuning placed)"},
	{"tuned", "sysctls, CPU governors and IRQ affinity of its active profile"},
	{"power-profiles-daemon", "CPU governor / energy_performance_preference"},
	{"netifd", "OpenWrt's interfaces; its packet_steering service rewrites rps_cpus and pins NAPI threads on every network reload"},
	{"NetworkManager", "interfaces and the ethtool offloads of its connection profiles"},
	{"systemd-networkd", "interfaces and the offloads of its .link/.network files"},
	{"tailscaled", "its tun device; it warns when rx-udp-gro-forwarding is off"},
}

// KnobOwners lists the service names inspect looks for.
func KnobOwners() []string {
	out := make([]string, 0, len(knobOwners))
	for _, s := range knobOwners {
		out = append(out, s.Name)
	}
	return out
}

// liveServices finds which knob owners run (by process name), without
// recording the host's process list.
func liveServices(f *hostfs.FS) []string {
	out := []string{}
	for _, s := range knobOwners {
		if procRunning(f, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// services turns the recorded names into the host's list; nil when the
// snapshot predates the question.
func (c *collector) services() []Service {
	if c.a.Services == nil {
		return nil
	}
	out := []Service{}
	for _, s := range knobOwners {
		for _, n := range c.a.Services {
			if n == s.Name {
				out = append(out, s)
			}
		}
	}
	return out
}

// openWrt reads OpenWrt's release file and network configuration; nil on
// other systems.
func (c *collector) openWrt() *OpenWrt {
	b, err := c.fs.ReadFile("/etc/openwrt_release")
	if err != nil {
		return nil
	}
	o := &OpenWrt{}
	for _, kv := range shellVars(b) {
		switch kv[0] {
		case "DISTRIB_RELEASE":
			o.Release = kv[1]
		case "DISTRIB_REVISION":
			o.Revision = kv[1]
		case "DISTRIB_TARGET":
			o.Target = kv[1]
		case "DISTRIB_ARCH":
			o.Arch = kv[1]
		}
	}
	if nb, err := c.fs.ReadFile("/etc/config/network"); err == nil {
		o.NetworkConfig = true
		o.Globals, o.PacketSteering, o.SteeringFlows = uciGlobals(nb)
	}
	return o
}

// shellVars reads KEY='value' / KEY="value" lines (os-release(5) syntax).
func shellVars(b []byte) [][2]string {
	var out [][2]string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if len(v) > 200 {
			v = v[:200]
		}
		out = append(out, [2]string{strings.TrimSpace(k), v})
	}
	return out
}

// uciGlobals finds the first "config globals" section of a uci file and its
// packet_steering and steering_flows options (uci(1) syntax: config TYPE
// ['NAME'], then option NAME 'VALUE' lines).
func uciGlobals(b []byte) (section, steering, flows string) {
	in, seen := false, false
	for _, line := range strings.Split(string(b), "\n") {
		f := uciFields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "config" {
			if seen {
				break
			}
			in = len(f) >= 2 && f[1] == "globals"
			if in {
				seen = true
				if len(f) >= 3 {
					section = f[2]
				}
			}
			continue
		}
		if in && f[0] == "option" && len(f) >= 3 {
			switch f[1] {
			case "packet_steering":
				steering = f[2]
			case "steering_flows":
				flows = f[2]
			}
		}
	}
	return section, steering, flows
}

// uciFields splits a uci line into words, unquoting '...' and "...".
func uciFields(line string) []string {
	var out []string
	for _, w := range strings.Fields(strings.TrimSpace(line)) {
		if strings.HasPrefix(w, "#") {
			break
		}
		w = strings.Trim(w, `'"`)
		if len(w) > 100 {
			w = w[:100]
		}
		out = append(out, w)
	}
	return out
}

// cpuCapacity reads cpuN/cpu_capacity, the scheduler's capacity of the
// CPU scaled to 1024 for the biggest (arm and arm64 with
// capacity-dmips-mhz in the device tree: big.LITTLE, DynamIQ); nil where
// the file is absent.
func (c *collector) cpuCapacity(n int) *int {
	return c.intp(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpu_capacity", n))
}
