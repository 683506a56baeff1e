// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/observe"
)

func init() {
	register(&Command{
		Name:    "doctor",
		Summary: "say why this host (or a snapshot) is slow and what to do: findings with evidence, fixes and checks",
		Usage: `wirespeed doctor [IFACE...] [--from SNAP.tar.gz] [--observe D | --result BENCH.json] [--json] [--fail-on warn|crit]

Runs every rule over what inspect reads (this host, or a snapshot taken
with 'wirespeed inspect --save' anywhere) and prints findings, most impact
first. Each finding has a stable id, a severity, the evidence it fired on
(fields of the snapshot or observation), why it costs throughput or
latency, the fix (commands to paste, and the actions 'wirespeed tune'
applies) and how to verify it with 'wirespeed bench'.

Rules about what happens at run time (where NAPIs are polled, softnet
squeezes and drops, the clock under load) need a second reading:
--observe 10s reads the host, observes it with eBPF (sampled: attached
10% of each second) for that long under whatever load it carries, and
reads it again; --result takes the observation, samples and snapshot a
bench run stored. Without either those rules say "not checked".

Read-only: nothing is changed. Exit 0 whatever was found, unless
--fail-on warn|crit (exit 1 when a finding is that severe or worse).`,
		Run: runDoctor,
	})
}

func runDoctor(ctx context.Context, env Env, args []string) error {
	c := commands["doctor"]
	fs := newFlagSet(c, env)
	asJSON := fs.Bool("json", false, "print JSON (schema "+doctor.SchemaVersion+", see docs/doctor-schema.md)")
	from := fs.String("from", "", "diagnose a snapshot `FILE` (wirespeed inspect --save) instead of this host")
	var obsDur secondsOrDuration
	fs.Var(&obsDur, "observe", "observe this host for `D` (10s) with eBPF between two readings, for the runtime rules")
	result := fs.String("result", "", "take the observation, samples and snapshot from a bench result `FILE`")
	failOn := fs.String("fail-on", "", "exit 1 when a finding is `warn` or crit (warn), or crit (crit)")
	ifaces, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	var failRank int
	failSet := false
	fs.Visit(func(f *flag.Flag) { failSet = failSet || f.Name == "fail-on" })
	switch *failOn {
	case "":
		if failSet {
			return usageErrorf("--fail-on is empty: want warn or crit (or leave the flag out for no gate)")
		}
		failRank = 99
	case "warn":
		failRank = doctor.Warn.Rank()
	case "crit":
		failRank = doctor.Crit.Rank()
	default:
		return usageErrorf("--fail-on: want warn or crit, got %q", *failOn)
	}
	observeSet := false
	fs.Visit(func(f *flag.Flag) { observeSet = observeSet || f.Name == "observe" })
	if observeSet && obsDur <= 0 {
		// --observe 0 is refused like -5s: the flag asks for an observation,
		// and skipping it silently would diagnose without one.
		return usageErrorf("--observe %v: want a positive duration such as 10s (leave --observe out to diagnose without observing)", time.Duration(obsDur))
	}
	if obsDur > 0 && *from != "" {
		return usageErrorf("--observe watches this host; a snapshot (--from) cannot be observed (use --result with a bench run from that host)")
	}
	if obsDur > 0 && *result != "" {
		return usageErrorf("--observe and --result both give an observation: use one")
	}
	in := &doctor.Input{Ifaces: ifaces}
	obsDesc := ""
	switch {
	case *result != "":
		if in, obsDesc, err = fromResult(ctx, *result, *from, ifaces); err != nil {
			return err
		}
	case *from != "":
		if in.Snap, err = loadSnapshot(ctx, *from, ifaces); err != nil {
			return err
		}
	default:
		if obsDur > 0 && os.Geteuid() != 0 {
			return fmt.Errorf("--observe attaches eBPF programs and needs root (CAP_BPF, CAP_PERFMON): run as root, or leave it out")
		}
		if in.Before, err = liveSnapshot(ctx, ifaces); err != nil {
			return err
		}
		in.Snap = in.Before
		if obsDur > 0 {
			fmt.Fprintf(env.Stderr, "wirespeed: observing for %v (sampled 10%%)...\n", time.Duration(obsDur))
			in.Obs, err = observe.Run(ctx, observe.Options{Ifaces: ifaces, Light: true, Sample: 0.1}, time.Duration(obsDur))
			if err != nil {
				return fmt.Errorf("observe: %w", err)
			}
			if in.Snap, err = liveSnapshot(ctx, ifaces); err != nil {
				return err
			}
			obsDesc = fmt.Sprintf("live %v, sampled 10%%", time.Duration(obsDur))
		} else {
			in.Before = nil
		}
	}
	rep, err := doctor.Diagnose(in)
	if err != nil {
		return err
	}
	rep.Source.Observation = obsDesc
	if *result != "" && *from == "" {
		rep.Source.Snapshot = "result " + *result
	}
	if *result != "" {
		// The rules say what would give them their data, --result among it;
		// with --result given, say what the result lacks instead.
		for i, sk := range rep.Skipped {
			if strings.Contains(sk.Reason, "--result") {
				rep.Skipped[i].Reason = fmt.Sprintf("%s lacks the data for this (its runs have no observation or fewer than two samples): run 'wirespeed bench' again (it records samples, and with --observe light or full the observation), or 'wirespeed doctor --observe 10s' on that host", *result)
			}
		}
	}
	if *asJSON {
		if err := writeJSON(env, rep); err != nil {
			return err
		}
	} else if err := doctor.WriteText(env.Stdout, rep); err != nil {
		return err
	}
	if w := rep.Worst(); w != "" && w.Rank() >= failRank {
		return fmt.Errorf("a finding is %s (--fail-on %s)", w, *failOn)
	}
	return nil
}
