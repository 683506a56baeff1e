// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/netdevnl"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

func (c *collector) napis(ifindex int) []NAPI {
	out := []NAPI{}
	for _, n := range c.a.NAPIs {
		if n.Ifindex != ifindex {
			continue
		}
		m := NAPI{
			ID: n.ID, IRQ: n.IRQ, PID: n.PID, DeferHardIRQs: n.DeferHardIRQs,
			GROFlushTimeoutNS: n.GROFlushTimeoutNS, IRQSuspendTimeoutNS: n.IRQSuspendTimeoutNS,
		}
		if n.Threaded != nil {
			switch *n.Threaded {
			case netdevnl.ThreadedDisabled:
				m.Threaded = "disabled"
			case netdevnl.ThreadedEnabled:
				m.Threaded = "enabled"
			case netdevnl.ThreadedBusyPoll:
				m.Threaded = "busy-poll"
			default:
				m.Threaded = fmt.Sprintf("mode %d", *n.Threaded)
			}
		}
		for _, q := range c.a.Queues {
			if q.Ifindex == ifindex && q.NAPIID != nil && *q.NAPIID == n.ID {
				if q.Type == "rx" {
					m.RXQueues = append(m.RXQueues, q.ID)
				} else if q.Type == "tx" {
					m.TXQueues = append(m.TXQueues, q.ID)
				}
			}
		}
		if n.PID != nil {
			m.Thread = c.thread(*n.PID)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (c *collector) thread(pid int) *NAPIThread {
	b, err := c.fs.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	st, err := procfs.ParsePidStat(b)
	if err != nil {
		return nil
	}
	t := &NAPIThread{PID: pid, Comm: st.Comm, CPU: st.Processor, State: st.State}
	if sb, err := c.fs.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		t.AllowedCPU = procfs.StatusField(sb, "Cpus_allowed_list")
	}
	return t
}

// threadsOf finds napi/<dev>-<id> kthreads by name. WireGuard's per-peer
// NAPIs have no NAPI id, so napi-get never lists them: only their threads
// show them. Kernel thread names are cut at 15 characters.
func (c *collector) threadsOf(dev string) []NAPIThread {
	if !c.scanned {
		c.scanned = true
		pids, _ := c.fs.ReadDir("/proc")
		for _, p := range pids {
			pid, err := strconv.Atoi(p)
			if err != nil {
				continue
			}
			// Look at every comm without recording it (a snapshot should
			// not list the host's processes); record the napi ones.
			p := fmt.Sprintf("/proc/%d/comm", pid)
			comm, err := c.fs.Quiet().ReadString(p)
			if err != nil || !(strings.HasPrefix(comm, "napi/") || wirelessWorker(comm)) {
				continue
			}
			if _, e := c.str(p); e != "" {
				continue
			}
			if t := c.thread(pid); t != nil {
				c.threads = append(c.threads, *t)
			}
		}
	}
	prefix := "napi/" + dev + "-"
	out := []NAPIThread{}
	for _, t := range c.threads {
		if strings.HasPrefix(t.Comm, prefix) || (len(t.Comm) == 15 && strings.HasPrefix(prefix, t.Comm)) {
			out = append(out, t)
		}
	}
	return out
}
