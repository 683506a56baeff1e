// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var wifiQueueingCases = addCases("wifi-queueing", []ruleCase{
	{name: "PCIe WiFi on mac80211", fixture: "ax210-iwlwifi", id: "wifi-queueing", fire: true, sev: Info},
	{name: "mt76 USB WiFi", fixture: "mt7921u-stock", id: "wifi-queueing", fire: true, sev: Info},
	{name: "a wired USB NIC", fixture: "rpi4-ax88179", id: "wifi-queueing"},
})

func TestRuleWifiQueueing(t *testing.T) { runCases(t, wifiQueueingCases) }
