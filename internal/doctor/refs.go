// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"regexp"
	"strings"
)

// References between findings. A finding may point at another ("see
// finding irq-stuck-rps-off for the mask"), but whether that one is in the
// report depends on the host, the device filter and what the other rule
// could check - so a rule never writes the reference itself: it writes
// seeFinding(id, device, fallback), and Diagnose, which knows the whole
// report, makes it "see finding ID" where that finding is there for the
// device, and the fallback (the same advice in words of its own)
// where it is not. No report points at a finding it does not hold.

const refOpen, refSep, refClose = "\x00see\x1f", "\x1f", "\x00"

var refRe = regexp.MustCompile("\x00see\x1f([^\x1f\x00]*)\x1f([^\x1f\x00]*)\x1f([^\x1f\x00]*)\x1f([^\x00]*)\x00")

// seeFinding: text that becomes "see finding ID" and what follows (more)
// when finding id names device (any device when "") in the report, else
// fallback.
func seeFinding(id, device, more, fallback string) string {
	return refOpen + id + refSep + device + refSep + more + refSep + fallback + refClose
}

// resolveRefs rewrites every reference in rep's findings.
func resolveRefs(rep *Report) {
	have := map[string]bool{}
	for _, f := range rep.Findings {
		have[f.ID+"\x1f"] = true
		for _, d := range f.Devices {
			have[f.ID+"\x1f"+d] = true
		}
	}
	fix := func(s string) string {
		if !strings.Contains(s, refOpen) {
			return s
		}
		return refRe.ReplaceAllStringFunc(s, func(m string) string {
			p := refRe.FindStringSubmatch(m)
			if have[p[1]+"\x1f"+p[2]] {
				return "see finding " + p[1] + p[3]
			}
			return p[4]
		})
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		f.Title, f.Why, f.Verify = fix(f.Title), fix(f.Why), fix(f.Verify)
		for j := range f.Unchecked {
			f.Unchecked[j] = fix(f.Unchecked[j])
		}
		if f.Fix != nil {
			f.Fix.Caveat = fix(f.Fix.Caveat)
			for j := range f.Fix.Commands {
				f.Fix.Commands[j] = fix(f.Fix.Commands[j])
			}
		}
	}
}
