// SPDX-License-Identifier: Apache-2.0

package usbnetround5

import "testing"

// A stall report as the 7.3.4 guest's console shows it (CRLF lines, a
// module's frames with [module] after them): the site is the caller of
// hrtimer_start_range_ns.
func TestStallSite(t *testing.T) {
	console := "[   40.728536] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\r\n" +
		"[   40.728637] Call Trace:\r\n[   40.728639]  <TASK>\r\n" +
		"[   40.728644]  _raw_spin_lock_irqsave+0x3e/0x50\r\n" +
		"[   40.728655]  hrtimer_start_range_ns+0x38/0xf0\r\n" +
		"[   40.728666]  cdc_ncm_txpath_bh+0xcb/0xd0 [cdc_ncm]\r\n" +
		"[   40.728687]  tasklet_action_common+0xb7/0x1b0\r\n"
	if got := stallSite(console); got != "cdc_ncm_txpath_bh" {
		t.Fatalf("stallSite = %q", got)
	}
	if got := stallSite("rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n no trace\n"); got != "?" {
		t.Fatalf("no trace: %q", got)
	}
}
