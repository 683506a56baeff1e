// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"strings"
	"testing"
	"time"
)

func TestApplyOptionsValidate(t *testing.T) {
	good := func() ApplyOptions {
		return ApplyOptions{Goal: "latency", Guard: "throughput,cpu", Pairs: 3, Duration: 5 * time.Second,
			Direction: "send", Streams: 4, VerifyTimeout: time.Minute, BenchArgs: []string{"--port", "5202"}}
	}
	o := good()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.Metric != MetricLatencyP99 || len(o.Guards) != 2 {
		t.Errorf("metric %q, guards %q", o.Metric, o.Guards)
	}
	for _, c := range []struct {
		name string
		mod  func(*ApplyOptions)
		want string
	}{
		{"goal", func(o *ApplyOptions) { o.Goal = "speed" }, `goal "speed"`},
		{"guard", func(o *ApplyOptions) { o.Guard = "speed" }, "--guard:"},
		{"one pair", func(o *ApplyOptions) { o.Pairs = 1 }, "--pairs 1"},
		{"short", func(o *ApplyOptions) { o.Duration = 500 * time.Millisecond }, "--duration 500ms"},
		{"both ways", func(o *ApplyOptions) { o.Direction = "both" }, `--direction "both"`},
		{"no stream", func(o *ApplyOptions) { o.Streams = 0 }, "-P 0"},
		{"owned bench flag", func(o *ApplyOptions) { o.BenchArgs = []string{"-t", "3"} }, "--bench-args:"},
		{"verify timeout", func(o *ApplyOptions) { o.VerifyTimeout = time.Millisecond }, "--verify-timeout 1ms"},
	} {
		o := good()
		c.mod(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
