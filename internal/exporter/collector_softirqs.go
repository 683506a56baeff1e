// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/procfs"
)

// softirqsCollector exports the NET_RX and NET_TX lines of /proc/softirqs.
type softirqsCollector struct {
	files *openFiles
}

var mSoftirqs = counterMetric("softirqs_total", "NET_RX and NET_TX softirqs run on the CPU (/proc/softirqs).", "cpu", "type")

func (*softirqsCollector) metrics() []*metric { return []*metric{mSoftirqs} }

func (c *softirqsCollector) update(ch chan<- prometheus.Metric, _ *reading) error {
	b, err := c.files.read("/proc/softirqs")
	if err != nil {
		return err
	}
	s, err := procfs.ParseSoftirqs(b)
	if err != nil {
		return err
	}
	for _, typ := range []string{"NET_RX", "NET_TX"} {
		counts, ok := s.Counts[typ]
		if !ok {
			return fmt.Errorf("/proc/softirqs has no %s line", typ)
		}
		for i, n := range counts {
			if i < len(s.CPUs) {
				mSoftirqs.send(ch, float64(n), strconv.Itoa(s.CPUs[i]), typ)
			}
		}
	}
	return nil
}
