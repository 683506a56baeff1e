// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/shellquote"
)

// The usb-nic and usbdev scenarios' tune step (--tune ARGS): after the
// bench (the warm-up that gives doctor an interrupt count to judge), the
// guest runs 'wirespeed tune apply' on the USB adapter against the host
// namespace's iperf3 server, records doctor, plan, status and the RPS
// knobs before and after, runs 'tune persist', and re-plugs the USB device
// (deauthorize, authorize: usbcore sets configuration 0, then reads the
// descriptors and sets the configuration again - through usb-redir that
// reaches the device process as set_configuration 0 and 1 - and the
// driver, cdc_ether or the usbdev model's, makes a new device) twice: once without udevd, once with the
// host's systemd-udevd running in the guest, to see whether persist's
// udev rule brings the settings back; then 'tune revert --all' puts back
// what was there before.

// udevadmHost is the host's udevadm; systemd-udevd is the same program
// under another name.
const udevadmHost = "/usr/bin/udevadm"

// tuneArgs returns the extra 'tune apply' flags of --tune.
func tuneArgs(o Options) []string { return strings.Fields(o.Tune) }

// tuneFlag returns the value of flag name ("--pairs" or "-pairs", as
// "--x V" or "--x=V") in args, or def.
func tuneFlag(args []string, name, def string) string {
	v := def
	for i, a := range args {
		a = "-" + strings.TrimLeft(a, "-")
		if a == "-"+name && i+1 < len(args) {
			v = args[i+1]
		} else if strings.HasPrefix(a, "-"+name+"=") {
			v = strings.TrimPrefix(a, "-"+name+"=")
		}
	}
	return v
}

// tuneScenarios are the scenarios that take --tune: those whose device
// under test is a USB adapter facing the host namespace's iperf3.
var tuneScenarios = []string{"usb-nic", "usbdev"}

// tuneMaxTime is a MaxTime with --tune's step added when asked for.
func tuneMaxTime(o Options) time.Duration {
	if o.Tune != "" {
		return benchTime(o) + tuneTime(o)
	}
	return benchTime(o)
}

// tuneTime estimates a tune step: up to 4 actions, each pairs x 2
// measurements of the duration plus bench's omit and start-up, and the
// re-plugs.
func tuneTime(o Options) time.Duration {
	args := tuneArgs(o)
	pairs, err := strconv.Atoi(tuneFlag(args, "pairs", "3"))
	if err != nil || pairs < 2 {
		pairs = 3
	}
	d, err := time.ParseDuration(tuneFlag(args, "duration", "5s"))
	if err != nil || d < time.Second {
		d = 5 * time.Second
	}
	return time.Duration(4*pairs*2)*(d+6*time.Second) + 90*time.Second
}

// tuneScript is the tune step of the usb-nic and usbdev scripts: $DIF is
// the device, driver the one to wait for after a re-plug, peer the address
// of the iperf3 server behind it.
func tuneScript(o Options, driver, peer string) string {
	args := []string{"/usr/bin/wirespeed", "tune", "apply", "--peer", peer, "--json"}
	args = append(args, tuneArgs(o)...)
	var q []string
	for _, a := range args {
		q = append(q, shellquote.Quote(a))
	}
	return guestScript("tune.sh", "@TUNE_APPLY@", strings.Join(q, " "), "@DRIVER@", driver)
}

// tuneFiles are the run archive's extra files of a tune step: udevadm
// (systemd-udevd) and its libraries as /usr/bin/udevadm - the host's, or
// root's for a foreign architecture (GuestRoot; "" is this host) - when
// there is one.
func tuneFiles(o Options, root string) (map[string][]byte, error) {
	files := map[string][]byte{}
	if o.Tune == "" {
		return files, nil
	}
	udevadm := ""
	for _, c := range []string{udevadmHost, "/bin/udevadm"} {
		if fileExists(inRoot(root, c)) {
			udevadm = c
			break
		}
	}
	if udevadm == "" {
		return files, nil
	}
	libs, err := sharedLibsIn(root, inRoot(root, udevadm))
	if err != nil {
		return nil, fmt.Errorf("udevadm for the tune step: %w", err)
	}
	for _, p := range append([]string{udevadm}, libs...) {
		b, err := os.ReadFile(inRoot(root, p))
		if err != nil {
			return nil, err
		}
		g := strings.TrimPrefix(p, "/")
		if p == udevadm {
			g = strings.TrimPrefix(udevadmHost, "/")
		}
		files[g] = b
	}
	return files, nil
}
