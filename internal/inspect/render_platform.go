// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
)

// The host's platform facts in the text view, beside the CPU, irqbalance
// and os lines a reader looks at for them: CPU capacities (big.LITTLE),
// the services that own knobs, OpenWrt's release and packet steering.

// capacity prints cpu_capacity per group of CPUs that share it; nothing
// where no CPU has one.
func (p *printer) capacity(c CPUs) {
	byCap := map[int][]int{}
	var caps []int
	for _, cpu := range c.PerCPU {
		if cpu.Capacity == nil {
			continue
		}
		if _, ok := byCap[*cpu.Capacity]; !ok {
			caps = append(caps, *cpu.Capacity)
		}
		byCap[*cpu.Capacity] = append(byCap[*cpu.Capacity], cpu.CPU)
	}
	if len(caps) == 0 {
		return
	}
	var parts []string
	for _, v := range caps {
		parts = append(parts, fmt.Sprintf("CPUs %s %d", cpumask.FormatList(byCap[v]), v))
	}
	what := "all alike"
	if len(caps) > 1 {
		what = "heterogeneous: RPS and IRQ moves go to the biggest"
	}
	p.kv("capacity", "%s (cpu_capacity, 1024 the biggest; %s)", strings.Join(parts, ", "), what)
}

// services prints the running services that own knobs, one a line.
func (p *printer) services(list []Service) {
	for i, s := range list {
		key := ""
		if i == 0 {
			key = "services"
		}
		p.kv(key, "%s owns %s", s.Name, s.Owns)
	}
}

// openWrt prints OpenWrt's release and who owns RPS there.
func (p *printer) openWrt(o *OpenWrt) {
	if o == nil {
		return
	}
	p.kv("openwrt", "%s %s, target %s (%s)", orDash(o.Release), o.Revision, orDash(o.Target), orDash(o.Arch))
	if !o.NetworkConfig {
		p.kv("", "/etc/config/network not read: packet steering unknown")
		return
	}
	sec := "@globals[0]"
	if o.Globals != "" {
		sec = o.Globals
	}
	ps := o.PacketSteering
	if ps == "" {
		ps = "unset (on, as 1)"
	}
	p.kv("", "packet steering (network.%s.packet_steering, owns rps_cpus): %s, steering_flows %s", sec, ps, orDash(o.SteeringFlows))
}
