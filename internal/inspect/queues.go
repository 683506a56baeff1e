// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
)

func queueIndex(name string) int {
	_, n, _ := strings.Cut(name, "-")
	i, _ := strconv.Atoi(n)
	return i
}

func (c *collector) queues(base string) ([]RXQueue, []TXQueue) {
	rx, tx := []RXQueue{}, []TXQueue{}
	entries, err := c.fs.ReadDir(base + "/queues")
	if err != nil {
		return rx, tx
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i][:2] != entries[j][:2] {
			return entries[i] < entries[j]
		}
		return queueIndex(entries[i]) < queueIndex(entries[j])
	})
	ntx := 0
	for _, e := range entries {
		if strings.HasPrefix(e, "tx-") {
			ntx++
		}
	}
	for _, e := range entries {
		q := base + "/queues/" + e
		switch {
		case strings.HasPrefix(e, "rx-"):
			r := RXQueue{Name: e}
			if s, er := c.str(q + "/rps_cpus"); er == "" {
				r.RPSCPUs = s
				if l, err := cpumask.ParseMask(s); err == nil {
					r.RPSCPUList = cpumask.FormatList(l)
				}
			} else {
				r.Error = "rps_cpus: " + er
			}
			r.RPSFlowCnt = c.intp(q + "/rps_flow_cnt")
			rx = append(rx, r)
		case strings.HasPrefix(e, "tx-"):
			t := TXQueue{Name: e}
			if s, er := c.str(q + "/xps_cpus"); er == "" {
				t.XPSCPUs = s
			} else if er == "ENOENT" && ntx == 1 && c.fs.Exists(q+"/xps_cpus") {
				t.XPSNote = "not applicable: one TX queue"
			} else if er == "missing" {
				t.XPSNote = "not available (kernel without XPS)"
			} else {
				t.XPSNote = "unreadable: " + er
			}
			t.TxMaxRate = c.intp(q + "/tx_maxrate")
			if bq := q + "/byte_queue_limits"; c.fs.IsDir(bq) {
				t.BQL = &BQL{
					Limit: c.int64p(bq + "/limit"), LimitMin: c.int64p(bq + "/limit_min"),
					LimitMax: c.int64p(bq + "/limit_max"), Inflight: c.int64p(bq + "/inflight"),
					HoldTime: c.int64p(bq + "/hold_time"), StallThrs: c.int64p(bq + "/stall_thrs"),
					StallCnt: c.int64p(bq + "/stall_cnt"), StallMax: c.int64p(bq + "/stall_max"),
				}
			}
			tx = append(tx, t)
		}
	}
	return rx, tx
}
