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
	f := addDoctorFlags(fs)
	ifaces, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	// Everything is checked before the host is read.
	failRank, err := f.check()
	if err != nil {
		return err
	}
	if err := refuseEmptyOf(fs, "", "from", "result"); err != nil {
		return err
	}
	in, obsDesc, err := readDoctorInput(ctx, env, f, ifaces)
	if err != nil {
		return err
	}
	rep, err := doctor.Diagnose(in)
	if err != nil {
		return err
	}
	noteDoctorSource(rep, obsDesc, *f.result, *f.from)
	return writeDoctor(env, rep, *f.asJSON, failRank, *f.failOn)
}

// doctorFlags are doctor's flags; set holds the names given.
type doctorFlags struct {
	asJSON       *bool
	from, result *string
	failOn       *string
	obsDur       secondsOrDuration
	set          map[string]bool
}

func addDoctorFlags(fs *flag.FlagSet) *doctorFlags {
	f := &doctorFlags{}
	f.asJSON = fs.Bool("json", false, "print JSON (schema "+doctor.SchemaVersion+", see docs/doctor-schema.md)")
	f.from = fs.String("from", "", "diagnose a snapshot `FILE` (wirespeed inspect --save) instead of this host")
	fs.Var(&f.obsDur, "observe", "observe this host for `D` (10s) with eBPF between two readings, for the runtime rules")
	f.result = fs.String("result", "", "take the observation, samples and snapshot from a bench result `FILE`")
	f.failOn = fs.String("fail-on", "", "exit 1 when a finding is `warn` or crit (warn), or crit (crit)")
	return f
}

// check refuses a bad --fail-on and an --observe that cannot be done, and
// returns the severity rank --fail-on fails at (99: none).
func (f *doctorFlags) check() (int, error) {
	var failRank int
	switch *f.failOn {
	case "":
		if f.set["fail-on"] {
			return 0, usageErrorf("--fail-on is empty: want warn or crit (or leave the flag out for no gate)")
		}
		failRank = 99
	case "warn":
		failRank = doctor.Warn.Rank()
	case "crit":
		failRank = doctor.Crit.Rank()
	default:
		return 0, usageErrorf("--fail-on: want warn or crit, got %q", *f.failOn)
	}
	if f.set["observe"] && time.Duration(f.obsDur) < 100*time.Millisecond {
		// --observe 0 is refused like -5s: the flag asks for an observation,
		// and skipping it silently would diagnose without one; below
		// observe's own minimum (100ms) no program sees a poll.
		return 0, usageErrorf("--observe %v: want 100ms or more, such as 10s (leave --observe out to diagnose without observing)", time.Duration(f.obsDur))
	}
	if f.obsDur > 0 && *f.from != "" {
		return 0, usageErrorf("--observe watches this host; a snapshot (--from) cannot be observed (use --result with a bench run from that host)")
	}
	if f.obsDur > 0 && *f.result != "" {
		return 0, usageErrorf("--observe and --result both give an observation: use one")
	}
	return failRank, nil
}

// readDoctorInput reads what the rules run on: a bench result, a snapshot,
// or this host (observed for --observe between two readings). It returns
// the observation's description for the report ("" for none).
func readDoctorInput(ctx context.Context, env Env, f *doctorFlags, ifaces []string) (*doctor.Input, string, error) {
	in := &doctor.Input{Ifaces: ifaces}
	obsDesc := ""
	var err error
	switch {
	case *f.result != "":
		if in, obsDesc, err = fromResult(ctx, *f.result, *f.from, ifaces); err != nil {
			return nil, "", err
		}
	case *f.from != "":
		if in.Snap, err = loadSnapshot(ctx, *f.from, ifaces); err != nil {
			return nil, "", err
		}
	default:
		obsDur := time.Duration(f.obsDur)
		if obsDur > 0 && os.Geteuid() != 0 {
			return nil, "", fmt.Errorf("--observe attaches eBPF programs and needs root (CAP_BPF, CAP_PERFMON): run as root, or leave it out")
		}
		if in.Before, err = liveSnapshot(ctx, ifaces); err != nil {
			return nil, "", err
		}
		in.Snap = in.Before
		if obsDur > 0 {
			fmt.Fprintf(env.Stderr, "wirespeed: observing for %v (sampled 10%%)...\n", obsDur)
			in.Obs, err = observe.Run(ctx, observe.Options{Ifaces: ifaces, Light: true, Sample: 0.1}, obsDur)
			if err != nil {
				return nil, "", fmt.Errorf("observe: %w", err)
			}
			if in.Snap, err = liveSnapshot(ctx, ifaces); err != nil {
				return nil, "", err
			}
			obsDesc = fmt.Sprintf("live %v, sampled 10%%", obsDur)
		} else {
			in.Before = nil
		}
	}
	return in, obsDesc, nil
}

// noteDoctorSource says in the report where its data came from, and with
// --result what the result lacks for the rules it leaves unchecked.
func noteDoctorSource(rep *doctor.Report, obsDesc, result, from string) {
	rep.Source.Observation = obsDesc
	if result != "" && from == "" {
		rep.Source.Snapshot = "result " + result
	}
	if result != "" {
		// The rules say what would give them their data, --result among it;
		// with --result given, say what the result lacks instead.
		for i, sk := range rep.Skipped {
			if strings.Contains(sk.Reason, "--result") {
				rep.Skipped[i].Reason = fmt.Sprintf("%s lacks the data for this (its runs have no observation or fewer than two samples): run 'wirespeed bench' again (it records samples, and with --observe light or full the observation), or 'wirespeed doctor --observe 10s' on that host", result)
			}
		}
	}
}

// writeDoctor prints the report (text or JSON) and fails when a finding
// is at least as severe as --fail-on.
func writeDoctor(env Env, rep *doctor.Report, asJSON bool, failRank int, failOn string) error {
	if asJSON {
		if err := writeJSON(env, rep); err != nil {
			return err
		}
	} else if err := doctor.WriteText(env.Stdout, rep); err != nil {
		return err
	}
	if w := rep.Worst(); w != "" && w.Rank() >= failRank {
		return fmt.Errorf("a finding is %s (--fail-on %s)", w, failOn)
	}
	return nil
}
