// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"context"
	"encoding/json"
)

// BenchObserver runs a Session for the length of a bench run; it satisfies
// bench.Observer (defined there, wired up in internal/cli/shared_bench_observe.go).
type BenchObserver struct {
	Light  bool    // see Options.Light
	Sample float64 // see Options.Sample; 0 or 1: attached throughout
	// Programs is Options.Programs.
	Programs string
}

// Start attaches the programs; stop detaches them and returns the
// Observation of the whole run as JSON.
func (b BenchObserver) Start(ctx context.Context, ifaces []string) (func() (json.RawMessage, error), error) {
	s, err := Start(ctx, Options{Ifaces: ifaces, Light: b.Light, Sample: b.Sample, Programs: b.Programs})
	if err != nil {
		return nil, err
	}
	return func() (json.RawMessage, error) {
		defer s.Close()
		o, err := s.Total()
		if err != nil {
			return nil, err
		}
		return json.Marshal(o)
	}, nil
}
