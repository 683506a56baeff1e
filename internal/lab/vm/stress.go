package vm

import (
	_ "embed" // the guest script of usbnet-stress
	"fmt"
	"time"
)

// usbnetStress is the guest side of the usbnet-stress scenario.
//
//go:embed usbnet_stress.sh
var usbnetStress string

const defaultCycles = 30

func init() {
	scenarios["usbnet-stress"] = &Scenario{
		Name: "usbnet-stress",
		Summary: "--cycles N of gadget rebind, link flap, MTU change, cdc_ncm/usbnet reload and runtime suspend/resume " +
			"(a packet sent while asleep), all under traffic, on the NCM loop at high speed",
		Modules: func(o Options) []string {
			return []string{"dummy_hcd", "libcomposite", "usb_f_ncm", "cdc_ncm", "configfs"}
		},
		// dummy_hcd cannot suspend a SuperSpeed port: high speed, so the
		// suspend cycles really suspend.
		Params:  func(o Options) map[string]string { return map[string]string{"dummy_hcd": dummyParams("high")} },
		Script:  stressScript,
		MaxTime: func(o Options) time.Duration { return time.Duration(cycles(o))*8*time.Second + time.Minute },
		NoBench: true,
	}
}

func cycles(o Options) int {
	if o.Cycles > 0 {
		return o.Cycles
	}
	return defaultCycles
}

// stressScript runs the stress in a subshell, so that its failure ends in
// the scenario's fail (the run fails, with the reason) and not in an exit.
func stressScript(o Options) string {
	return fmt.Sprintf(`ws stage stress
( N=%d; SYSTEM_SUSPEND=0
%s
) > /results/stress.txt 2>&1 || fail "usbnet stress: $(grep 'stress: FAIL' /results/stress.txt | head -n 1)"
grep 'cycles done' /results/stress.txt | sed 's/^/stress_result=/' >> /results/facts.txt
`, cycles(o), usbnetStress)
}
