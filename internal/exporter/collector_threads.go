// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/procfs"
)

// userHZ is the unit of utime and stime in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture wirespeed builds for).
const userHZ = 100

// threadsCollector exports each NAPI kthread inspect found: the CPU it
// last ran on and its CPU time, from /proc/PID/stat.
type threadsCollector struct {
	files *openFiles
}

// pid too: thread names are cut at 15 characters, so a long device name
// gives all its NAPI threads the same one.
var (
	mThreadCPU  = gaugeMetric("napi_thread_cpu", "The CPU a NAPI kernel thread last ran on.", "device", "thread", "pid")
	mThreadSecs = counterMetric("napi_thread_cpu_seconds_total", "CPU time of a NAPI kernel thread.", "device", "thread", "pid", "mode")
)

func (*threadsCollector) metrics() []*metric { return []*metric{mThreadCPU, mThreadSecs} }

// update reads the threads of this reading's snapshot. A thread that exits
// between inspect's scan and this read is left out, not an error.
func (c *threadsCollector) update(ch chan<- prometheus.Metric, r *reading) error {
	if r.snap == nil {
		return errNoSnapshot
	}
	var errs []string
	for _, d := range r.snap.Devices {
		for _, t := range d.Threads {
			b, err := c.files.read(fmt.Sprintf("/proc/%d/stat", t.PID))
			if err != nil {
				continue
			}
			st, err := procfs.ParsePidStat(b)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			pid := strconv.Itoa(t.PID)
			mThreadCPU.send(ch, float64(st.Processor), d.Name, st.Comm, pid)
			mThreadSecs.send(ch, float64(st.UTime)/userHZ, d.Name, st.Comm, pid, "user")
			mThreadSecs.send(ch, float64(st.STime)/userHZ, d.Name, st.Comm, pid, "system")
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
