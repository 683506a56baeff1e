// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// The parsers of bench's flag values.

// parseVariant parses "NAME: --gro on --threaded" with the lab flags; the
// lab flags given outside the variants are every variant's defaults.
func parseVariant(c *Command, env Env, spec string, outer *labFlags) (bench.Variant, error) {
	name, flags, ok := strings.Cut(spec, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return bench.Variant{}, usageErrorf("--variant %q: want 'NAME: lab flags', e.g. 'gro: --gro on'", spec)
	}
	fs := newFlagSet(c, env)
	knobs := addLabFlagsFrom(fs, *outer)
	pos, err := parseFlags(fs, strings.Fields(flags))
	if err != nil {
		return bench.Variant{}, usageErrorf("--variant %q: %v", spec, err)
	}
	if len(pos) > 0 {
		return bench.Variant{}, usageErrorf("--variant %q: unexpected %q", spec, pos[0])
	}
	cfg, err := knobs.config()
	if err != nil {
		return bench.Variant{}, usageErrorf("--variant %q: %v", spec, err)
	}
	return bench.Variant{Name: name, Lab: &cfg}, nil
}

func benchDuration(name, s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		s = strconv.FormatFloat(n, 'f', -1, 64) + "s" // plain seconds
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, usageErrorf("%s %q: not a duration (use e.g. 10s, 500ms, 1m)", dashed(name), s)
	}
	if d < 0 {
		return 0, usageErrorf("%s %q: negative; want a duration such as 10s", dashed(name), s)
	}
	return d, nil
}

var dscpNames = map[string]int{"ef": 46, "cs0": 0, "cs1": 8, "cs2": 16, "cs3": 24, "cs4": 32, "cs5": 40, "cs6": 48, "cs7": 56,
	"af11": 10, "af12": 12, "af13": 14, "af21": 18, "af22": 20, "af23": 22, "af31": 26, "af32": 28, "af33": 30,
	"af41": 34, "af42": 36, "af43": 38, "le": 1}

// benchParseTOS takes a TOS byte (decimal or 0x hex) or a DSCP name.
func benchParseTOS(s string) (int, error) {
	if d, ok := dscpNames[strings.ToLower(s)]; ok {
		return d << 2, nil
	}
	v, err := strconv.ParseInt(s, 0, 32)
	if err != nil || v < 0 || v > 255 {
		return 0, fmt.Errorf("--tos %q: want a TOS byte 0-255 (0xb8 = DSCP EF) or a DSCP name (ef, cs1, af41, ...)", s)
	}
	return int(v), nil
}
