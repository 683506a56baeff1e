// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"
)

var wgThreadedNapiCases = addCases("wg-threaded-napi", []ruleCase{
	{name: "inside the stable range of the backported default", fixture: "wg-gw-threaded", id: "wg-threaded-napi", fire: true, sev: Warn,
		text: "upgrade to 6.12.74 or later"},
	{name: "6.16: threaded by default", fixture: "wg-gateway-16", id: "wg-threaded-napi", fire: true, sev: Info},
	{name: "past the stable revert: softirq", fixture: "wg-gw-softirq", id: "wg-threaded-napi"},
})

func TestRuleWgThreadedNapi(t *testing.T) { runCases(t, wgThreadedNapiCases) }

// WireGuard threaded on mainline: outside the CVE's stable ranges, what is
// known (the default stays) and what is not (a mainline fix of the race).
func TestWGThreadedMainline(t *testing.T) {
	got, _ := findings(t, "wg-gw-pinned", nil)
	f := got["wg-threaded-napi"]
	mustSay(t, "mainline", fixText(f)+strings.Join(f.Unchecked, "\n"), []string{"no mainline fix of the race was found", "whether kernel 6.18.5 can stall"}, []string{"is one of them: upgrade"})
	got, _ = findings(t, "wg-gw-threaded", nil)
	mustSay(t, "stable range", fixText(got["wg-threaded-napi"]), []string{"upgrade to 6.12.74 or later"}, []string{"no mainline fix"})
}
