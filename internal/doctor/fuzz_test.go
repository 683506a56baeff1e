// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"encoding/json"
	"testing"

	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// FuzzDiagnose: doctor reads snapshots and observations that come from
// other hosts and other versions (--from, --result); whatever they hold,
// the rules must not crash.
func FuzzDiagnose(f *testing.F) {
	f.Add([]byte(fuzzSeed))
	f.Fuzz(func(t *testing.T, b []byte) {
		var in struct {
			Snap   *inspect.Snapshot    `json:"snap"`
			Before *inspect.Snapshot    `json:"before"`
			Obs    *observe.Observation `json:"obs"`
		}
		if json.Unmarshal(b, &in) != nil || in.Snap == nil {
			return
		}
		if _, err := Diagnose(&Input{Snap: in.Snap, Before: in.Before, Obs: in.Obs}); err != nil {
			t.Fatal(err)
		}
	})
}

var fuzzSeed = []byte(`{"snap":{"host":{"kernel":"6.12.1+deb12-amd64","cpus":{"online":"0-3","count":4,
"per_cpu":[{"cpu":0,"governor":"powersave","cpufreq":true,"cur_khz":600,"max_khz":1500}]},
"softnet":[{"cpu":0,"processed":10,"time_squeeze":1,"dropped":1}],
"sysctls":[{"name":"net.core.netdev_budget","value":"300"},{"name":"net.ipv4.ip_forward","value":"1"}]},
"devices":[{"name":"eth1","driver":"ax88179_178a","bus":"usb",
"usb":{"speed_mbps":"480","neighbours":[{"drivers":["uas"]}]},
"datapath":{"usbnet":{"state":"yes"},"own_napi":{"state":"no"},"rx_path":"no NAPI registered"},
"link":{"operstate":"up","speed_mbps":100,"qdisc":"pfifo_fast"},
"napi_threads":[{"pid":9,"allowed_cpus":"0"},{"pid":10,"allowed_cpus":"0"}],
"offloads":[{"name":"rx-gro","active":false}],
"rx_queues":[{"name":"rx-0","rps_cpus":"0"}],
"tx_queues":[{"name":"tx-0","xps_cpus":"0","bql":{"limit":0,"inflight":0}},{"name":"tx-1","xps_cpus":"0"}],
"irqs":[{"irq":46,"counts":[5000,0],"cpus":[0,1],"total":5000,"affinity_changeable":{"state":"no"}},
{"irq":47,"counts":[5000,0],"cpus":[0],"total":5000,"affinity_changeable":{"state":"yes"}}],
"stats":{"rx_packets":100,"tx_packets":100}},{"name":"wg0","driver":"wireguard","bus":"virtual"}]},
"before":{"host":{"softnet":[{"cpu":0,"processed":5}]},"devices":[{"name":"eth1","irqs":[{"irq":46,"counts":[1,0]}]}]},
"obs":{"cpus":[{"cpu":0,"net_rx_share":0.9},{"cpu":1}],"irqs":[{"irq":46,"count":5000,"per_cpu":[5000,0]}],
"devices":[{"name":"eth1","rx_path":"netif_rx backlog (no NAPI, no GRO)","netif_rx":9,"netif_rx_per_s":30000,
"delivered_skbs":3,"delivered_bytes_per_s":5000,
"napis":[{"napi":"1","work_per_s":5000,"contexts":[{"kind":"softirq","poll_share":1}],"cpus":[{"cpu":0,"work_share":1}]},
{"napi":"2","work_per_s":5000,"contexts":[{"kind":"softirq","poll_share":1}],"cpus":[{"cpu":0,"work_share":1}]}]}]}}`)

// FuzzParseKernel: a snapshot's kernel release is outside input; parsing
// it never panics, and what it parses is the release's own leading numbers.
func FuzzParseKernel(f *testing.F) {
	for _, s := range []string{"6.12.117+deb12-arm64", "6.1.0-56-amd64", "6.12.47+rpt-rpi-v8", "5.15.4-0-rpi4", "6.19", "x", "", "99999999999999999999.1.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		k, ok := ParseKernel(rel)
		if !ok {
			return
		}
		if k.Major < 0 || k.Minor < 0 || k.Patch < 0 {
			t.Errorf("ParseKernel(%q) = %+v: negative numbers", rel, k)
		}
		if !k.PatchKnown && k.Patch != 0 {
			t.Errorf("ParseKernel(%q) = %+v: a patch level it says it does not know", rel, k)
		}
		for _, fa := range Facts {
			_, _, _ = InStable(rel, fa.Key)
			_ = Has(rel, fa.Key)
		}
	})
}
