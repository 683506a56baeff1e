// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wirespeed/wirespeed/internal/observe"
)

func init() {
	register(&Command{
		Name:    "watch",
		Summary: "observe live: a top-like view refreshed every second (--json: one object per interval)",
		Usage: `wirespeed watch [--interval D] [--count N] [--light] [--sample PCT] [IFACE...] [--json]

Shows what 'wirespeed observe' shows, for each interval (default 1 s),
until Ctrl-C: RX path and GRO ratio per device, NAPI placement and context,
work per poll, NET_RX/NET_TX softirq time per CPU. In a terminal the screen
is redrawn; with --json one JSON object per interval is written per line.
--sample PCT attaches the programs for that share of each interval only
(see 'wirespeed help observe'); every interval then holds one window, and
its rates and shares are per attached second. Needs root. Nothing stays
attached after exit.`,
		Run: runWatch,
	})
}

func runWatch(ctx context.Context, env Env, args []string) error {
	c := commands["watch"]
	fs := newFlagSet(c, env)
	every := secondsOrDuration(time.Second)
	fs.Var(&every, "interval", "refresh interval, 1s or 1 (seconds)")
	count := fs.Int("count", 0, "stop after N intervals (0: until Ctrl-C)")
	asJSON := fs.Bool("json", false, "stream one JSON object per interval")
	light := fs.Bool("light", false, "leave out the per-packet pre-GRO events (see 'wirespeed help observe')")
	sample := sampleFlag(1)
	fs.Var(&sample, "sample", "attach for `PCT` of each interval, 10% or 0.1 (see 'wirespeed help observe')")
	progs := fs.String("programs", "auto", "auto, btf or classic (see 'wirespeed help observe')")
	ifaces, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkLocalIfaces(ifaces); err != nil {
		return err
	}
	if time.Duration(every) < 100*time.Millisecond {
		return usageErrorf("--interval must be at least 100ms, got %v", time.Duration(every))
	}
	if *count < 0 {
		return usageErrorf("--count %d: want 0 (until Ctrl-C) or a number of intervals", *count)
	}
	// The sampling period is the interval, so each interval's delta holds
	// one window's worth of attached time whatever the phase.
	if err := observe.CheckSample(float64(sample), time.Duration(every)); err != nil {
		return usageErrorf("--sample: %v", err)
	}
	if err := observe.CheckProgramsFlag(*progs); err != nil {
		return usageErrorf("--programs: %v", err)
	}
	s, err := observe.Start(ctx, observe.Options{Ifaces: ifaces, Light: *light, Sample: float64(sample), Programs: *progs,
		Period: time.Duration(every), DevIRQs: deviceIRQs(ctx, ifaces)})
	if err != nil {
		return err
	}
	defer s.Close()
	tick := time.NewTicker(time.Duration(every))
	defer tick.Stop()
	enc := json.NewEncoder(env.Stdout) // one line an interval, unlike writeJSON
	for n := 0; *count == 0 || n < *count; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		o, err := s.Interval()
		if err != nil {
			return err
		}
		if *asJSON {
			if err := enc.Encode(o); err != nil {
				return err
			}
			continue
		}
		// On a terminal that takes them, clear the screen and home the
		// cursor, then redraw; into a pipe, a file or TERM=dumb, one
		// interval after the other.
		if ansiOK(env.Stdout) {
			env.Stdout.Write([]byte("\x1b[H\x1b[2J"))
		} else if n > 0 {
			fmt.Fprintln(env.Stdout)
		}
		observe.WriteText(env.Stdout, o)
	}
	return nil
}
