// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// A Guard is one kind of kernel trouble the console can show.
type Guard struct {
	Name string
	// Fatal guards mean the guest is unlikely to finish: the run is stopped
	// a few seconds after the first one (to let the trace reach the log).
	Fatal bool
	re    *regexp.Regexp
}

// Guards are the console patterns that fail a scenario. They match the
// kernel's own wording (lib/bug.c, kernel/panic.c, arch/x86/kernel/dumpstack.c,
// arch/x86/kernel/traps.c, kernel/watchdog.c, kernel/rcu/tree_stall.h,
// mm/kasan/report.c, mm/slub.c).
var Guards = []Guard{
	{Name: "kernel panic", Fatal: true, re: regexp.MustCompile(`Kernel panic - not syncing`)},
	{Name: "BUG", Fatal: true, re: regexp.MustCompile(`\bBUG: |kernel BUG at `)},
	{Name: "Oops", Fatal: true, re: regexp.MustCompile(`\bOops: |Oops#`)},
	{Name: "general protection fault", Fatal: true, re: regexp.MustCompile(`general protection fault`)},
	{Name: "KASAN", Fatal: true, re: regexp.MustCompile(`KASAN: `)},
	{Name: "WARNING", re: regexp.MustCompile(`\bWARNING: (CPU: \d+ PID: \d+|at \S)`)},
	{Name: "soft lockup", re: regexp.MustCompile(`watchdog: BUG: soft lockup|soft lockup - CPU#`)},
	{Name: "hard lockup", Fatal: true, re: regexp.MustCompile(`(?i)hard LOCKUP`)},
	{Name: "RCU stall", re: regexp.MustCompile(`rcu: INFO: rcu_\w+ (self-)?detected stall|rcu_sched self-detected stall|rcu: INFO: rcu_\w+ detected expedited stalls`)},
	{Name: "hung task", re: regexp.MustCompile(`INFO: task .* blocked for more than`)},
}

// Hit is one guard that fired.
type Hit struct {
	Guard   string `json:"guard"`
	Fatal   bool   `json:"fatal"`
	Line    int    `json:"line"`    // 1-based line in the console log
	Text    string `json:"text"`    // the matching line
	Excerpt string `json:"excerpt"` // lines around it (a few before, the trace after)
}

func (h Hit) String() string {
	return fmt.Sprintf("%s at console line %d: %s", h.Guard, h.Line, h.Text)
}

// ScanConsole reads a console log and returns the guards that fired, in the
// order they first appear (one hit per guard: later ones are usually
// consequences). Excerpts hold up to 5 lines before and 40 after.
func ScanConsole(r io.Reader) ([]Hit, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return scanLines(lines), nil
}

func scanLines(lines []string) []Hit {
	var hits []Hit
	seen := map[string]bool{}
	for i, l := range lines {
		// Our own marker lines and echoed scripts are not kernel messages.
		if strings.HasPrefix(l, markerPrefix) {
			continue
		}
		for _, g := range Guards {
			if seen[g.Name] || !g.re.MatchString(l) {
				continue
			}
			// "BUG: soft lockup" is the soft lockup guard, not a BUG.
			if g.Name == "BUG" && strings.Contains(l, "soft lockup") {
				continue
			}
			seen[g.Name] = true
			lo, hi := max(0, i-5), min(len(lines), i+41)
			hits = append(hits, Hit{Guard: g.Name, Fatal: g.Fatal, Line: i + 1, Text: strings.TrimSpace(l),
				Excerpt: strings.Join(lines[lo:hi], "\n")})
		}
	}
	return hits
}

// consoleWatch scans console output as it arrives and calls onHit once per
// guard the first time it fires.
type consoleWatch struct {
	buf   []byte
	lines []string
	seen  map[string]bool
	onHit func(Hit)
}

func (w *consoleWatch) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(w.buf[:i]), "\r")
		w.buf = w.buf[i+1:]
		w.lines = append(w.lines, line)
		for _, h := range scanLines([]string{line}) {
			if w.seen == nil {
				w.seen = map[string]bool{}
			}
			if !w.seen[h.Guard] {
				w.seen[h.Guard] = true
				h.Line = len(w.lines)
				if w.onHit != nil {
					w.onHit(h)
				}
			}
		}
	}
	return len(p), nil
}
