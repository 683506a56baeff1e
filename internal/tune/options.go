// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"fmt"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// ApplyOptions are how tune apply measures and judges, as bench.Options
// are how bench measures: the command fills them from its flags and
// Validate checks every one before anything is read or changed. The
// errors name the flag that set the value.
type ApplyOptions struct {
	Goal          string        // --goal: throughput, latency or cpu
	Guard         string        // --guard: all, none, or a list of metrics
	Pairs         int           // --pairs: interleaved without/with pairs per action
	Duration      time.Duration // --duration: one measurement (Bench, LabBench)
	Direction     string        // --direction: bench.DirSend or bench.DirReceive
	Streams       int           // -P: parallel streams per measurement
	VerifyTimeout time.Duration // --verify-timeout: one run of --verify-cmd
	BenchArgs     []string      // --bench-args, split: extra bench flags

	// Set by Validate: the goal's metric and the guarded metrics
	// (ParseGuards).
	Metric string
	Guards []string
}

// Validate checks the options and sets Metric and Guards.
func (o *ApplyOptions) Validate() error {
	if o.VerifyTimeout < time.Second {
		return fmt.Errorf("--verify-timeout %s: want 1s or more", o.VerifyTimeout)
	}
	var err error
	if o.Metric, err = GoalMetric(o.Goal); err != nil {
		return err
	}
	if o.Guards, err = ParseGuards(o.Guard); err != nil {
		return fmt.Errorf("--guard: %w", err)
	}
	if o.Pairs < 2 || o.Pairs > 100 {
		return fmt.Errorf("--pairs %d: want 2-100 (the paired test needs two pairs)", o.Pairs)
	}
	if o.Duration < time.Second {
		return fmt.Errorf("--duration %s: want 1s or more", o.Duration)
	}
	if o.Direction != bench.DirSend && o.Direction != bench.DirReceive {
		return fmt.Errorf("--direction %q: want send or receive", o.Direction)
	}
	if o.Streams < 1 || o.Streams > 128 {
		return fmt.Errorf("-P %d: want 1-128 streams", o.Streams)
	}
	if err := CheckBenchArgs(o.BenchArgs); err != nil {
		return fmt.Errorf("--bench-args: %w", err)
	}
	return nil
}
