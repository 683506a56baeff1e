// SPDX-License-Identifier: Apache-2.0

// Which host and which device a journal entry is about.

package tune

import (
	"fmt"
	"os"
	"strings"
)

// HostID names this machine for the journal: /etc/machine-id, else the
// host name.
func HostID() string {
	if b, err := os.ReadFile("/etc/machine-id"); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" && len(id) <= 64 {
			return "machine-id:" + id
		}
	}
	if h, err := os.Hostname(); err == nil {
		return "hostname:" + h
	}
	return ""
}

// foreignHost says why entry e may not be touched from host (or "").
func foreignHost(e *Entry, host string) string {
	if e.Host == "" || host == "" || e.Host == host {
		return ""
	}
	return fmt.Sprintf("%s was changed on another machine (%s, this is %s): a journal is revertible only where it was written", e.Action.ID, e.Host, host)
}

// otherDevice says why the device now named like e's is not the one e
// changed (or ""): a new MAC, or a new ifindex with no MAC to confirm.
func otherDevice(e *Entry, idx int, mac string) string {
	if e.Action.Device == "" {
		return ""
	}
	if e.MAC != "" && mac != e.MAC {
		return fmt.Sprintf("%s is another device now (MAC %s, was %s; ifindex %d, was %d)", e.Action.Device, mac, e.MAC, idx, e.Ifindex)
	}
	if e.MAC == "" && idx != e.Ifindex {
		return fmt.Sprintf("%s has a new ifindex (%d, was %d) and the journal has no MAC to tell whether it is the same device", e.Action.Device, idx, e.Ifindex)
	}
	return ""
}
