// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var mt76UsbNoReorderCases = addCases("mt76-usb-no-reorder", []ruleCase{
	{name: "mt76 USB on 7.3, the fix's release unrecorded", fixture: "mt7921u-73", id: "mt76-usb-no-reorder", fire: true, sev: Info, text: "retransmits"},
	{name: "mt76 USB on 6.12, before the regression", fixture: "mt7921u-stock", id: "mt76-usb-no-reorder"},
	{name: "a wired USB NIC", fixture: "rpi4-ax88179", id: "mt76-usb-no-reorder"},
})

func TestRuleMt76UsbNoReorder(t *testing.T) { runCases(t, mt76UsbNoReorderCases) }
