// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/procfs"
)

// softnetCollector exports /proc/net/softnet_stat, one row per CPU.
type softnetCollector struct {
	files *openFiles
}

var (
	mSNProcessed = counterMetric("softnet_processed_total", "Packets processed by the CPU's NET_RX (softnet_stat).", "cpu")
	mSNDropped   = counterMetric("softnet_dropped_total", "Packets dropped because the CPU's backlog was full (softnet_stat).", "cpu")
	mSNSqueezed  = counterMetric("softnet_times_squeezed_total", "NET_RX runs that stopped with work left: budget or time used up (softnet_stat).", "cpu")
	mSNRPS       = counterMetric("softnet_received_rps_total", "RPS IPIs the CPU received (softnet_stat).", "cpu")
	mSNFlowLimit = counterMetric("softnet_flow_limit_count_total", "Packets dropped by the flow limit (softnet_stat).", "cpu")
	mSNBacklog   = gaugeMetric("softnet_backlog_packets", "Packets in the CPU's backlog queues now (softnet_stat, Linux 5.10+).", "cpu")
)

func (*softnetCollector) metrics() []*metric {
	return []*metric{mSNProcessed, mSNDropped, mSNSqueezed, mSNRPS, mSNFlowLimit, mSNBacklog}
}

func (c *softnetCollector) update(ch chan<- prometheus.Metric, _ *reading) error {
	b, err := c.files.read("/proc/net/softnet_stat")
	if err != nil {
		return err
	}
	rows, err := procfs.ParseSoftnetStat(b)
	if err != nil {
		return err
	}
	for _, r := range rows {
		cpu := strconv.Itoa(r.CPU)
		mSNProcessed.send(ch, float64(r.Processed), cpu)
		mSNDropped.send(ch, float64(r.Dropped), cpu)
		mSNSqueezed.send(ch, float64(r.TimeSqueeze), cpu)
		mSNRPS.send(ch, float64(r.ReceivedRPS), cpu)
		mSNFlowLimit.send(ch, float64(r.FlowLimitCount), cpu)
		mSNBacklog.send(ch, float64(r.InputQlen+r.ProcessQlen), cpu)
	}
	return nil
}
