// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/shellquote"
)

// The guest's /init: the wrapper, the shell library every scenario uses, and
// the script that loads the modules and runs the scenario (guest/init.sh,
// guest/lib.sh, guest/main.sh; see guest.go).

// initWrapper is the guest's /init. It mounts the file systems and runs
// the scenario's script in a child shell, so that a script that dies (a
// syntax error, a killed shell) still sends what it has and powers off
// instead of panicking the kernel by ending init.
var initWrapper = guestText("init.sh")

// initLib holds the shell functions of main.sh, also used by the wrapper.
var initLib = guestScript("lib.sh", "@MARKER@", markerPrefix)

// envScript is /ws/env.sh, what the guest's scripts need to know of the
// board: the results channel's device and how to end the run.
func envScript(m *Machine) string {
	return fmt.Sprintf("WS_TTY=%s\nWS_POWEROFF=%s\n", m.ResultsTTY, shellquote.Quote(m.PowerOff))
}

// initScript is the guest's main script: load modules, run the scenario,
// send /results to the host over the results channel, power off.
func initScript(s *Scenario, o Options, loads []moduleLoad) string {
	var b strings.Builder
	b.WriteString(guestScript("main.sh", "@MACHINE@", machineOf(o).Name))
	for _, l := range loads {
		fmt.Fprintf(&b, "insmod /lib/modules/ws/%s.ko %s || fail %s\n", l.Name, l.Params, shellquote.Quote("insmod "+l.Name+" failed (see the console log)"))
		fmt.Fprintf(&b, "echo %s >> /results/modules.txt\n", shellquote.Quote(l.Name+" "+l.Source))
	}
	b.WriteString("grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config 2>/dev/null\n")
	if !o.RawIperf3 && !o.NoPin && !s.NoBench {
		b.WriteString("ws_pin_tracepoints\n")
	}
	b.WriteString(s.Script(o))
	b.WriteString("finish 0\n")
	return b.String()
}

// moduleLoad is one insmod of the init script.
type moduleLoad struct {
	Name, Params string
	Source       string // "stock" or "modules-dir"
}
