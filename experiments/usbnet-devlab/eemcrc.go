// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"path/filepath"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// eemCRCRuns are the directories of the cdc_eem CRC runs (the net fix
// kernel/usbnet/net/any/0001), by table id.
var eemCRCRuns = map[string]string{"eemcrc-7.3": "eemcrc-7.3.4-2026-11-28"}

// eemCRCTable: one row per boot - the verdict, the EEM model's packets
// and transfers to the host, its packets with a real CRC, the drops the
// bug predicts (CRC'd packets not last in their transfer: the model
// alternates CRC and sentinel, so CRC'd x (1 - transfers/packets)) and
// the rx_errors the guest counted over the receive bench.
func eemCRCTable(dir string) (string, error) {
	names, err := boots(dir)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, n := range names {
		var d struct {
			Model map[string]float64 `json:"model"`
		}
		ok, facts, err := readBoot(filepath.Join(dir, n), &d)
		if err != nil {
			return "", err
		}
		frames, aggs, crc := d.Model["frames_to_host"], d.Model["aggregates_to_host"], d.Model["eem_crc_real"]
		predicted := 0.0
		if frames > 0 {
			predicted = crc * (1 - aggs/frames)
		}
		verdict := "pass"
		if !ok {
			verdict = "FAIL"
		}
		rows = append(rows, []string{n, verdict, kit.F(frames, 0), kit.F(aggs, 0), kit.F(frames/aggs, 2), kit.F(crc, 0),
			kit.F(predicted, 0), kit.F(facts["after-receive.rx_errors"]-facts["before-receive.rx_errors"], 0)})
	}
	return kit.Table([]string{"boot", "verdict", "packets to the host", "bulk IN transfers", "packets per transfer",
		"packets with a real CRC", "drops the bug predicts (CRC'd, not last)", "guest rx_errors"}, rows), nil
}
