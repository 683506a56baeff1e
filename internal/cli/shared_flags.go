// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Flag values and checks several commands declare: sampling shares,
// durations in seconds or Go syntax, and flags given empty.

// sampleFlag is a sampling share (observe.Options.Sample), given as a
// percentage (10%) or a fraction (0.1).
type sampleFlag float64

func (f *sampleFlag) String() string {
	return strconv.FormatFloat(100*float64(*f), 'g', -1, 64) + "%"
}

func (f *sampleFlag) Set(s string) error {
	v, err := parseSample(s)
	if err != nil {
		return err
	}
	*f = sampleFlag(v)
	return nil
}

// parseSample reads "10%", "12.5%" or "0.1" as a fraction in (0, 1]. (The
// flag package names the value in its error.)
func parseSample(s string) (float64, error) {
	num, percent := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("want a percentage such as 10% or a fraction such as 0.1")
	}
	if percent {
		v /= 100
	}
	switch {
	case v <= 0:
		return 0, errors.New("must be more than 0% (100% is continuous)")
	case v > 1 && !percent && v <= 100:
		return 0, fmt.Errorf("a fraction is at most 1; for a percentage write %s%%", num)
	case v > 1 && !percent:
		return 0, errors.New("want a percentage up to 100% (continuous), such as 10%, or a fraction up to 1, such as 0.1")
	case v > 1:
		return 0, errors.New("at most 100% (continuous)")
	}
	return v, nil
}

// secondsOrDuration is a duration flag that also takes plain seconds.
type secondsOrDuration time.Duration

func (d *secondsOrDuration) String() string { return time.Duration(*d).String() }

func (d *secondsOrDuration) Set(s string) error {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		*d = secondsOrDuration(f * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 10s, 500ms or a number of seconds")
	}
	*d = secondsOrDuration(v)
	return nil
}

// parseDurationFlag reads flag name's value as a duration (plain numbers
// are seconds), refusing a negative one; bench's and lab vm's.
func parseDurationFlag(name, s string) (time.Duration, error) {
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

// refuseEmptyOf refuses the named flags given with an empty value: an
// empty FILE or DIR is not "no file" (the host instead of a snapshot, the
// default directory), it is a mistake to point out. prefix starts the
// message ("lab vm: ", or "" where the command's name is the prefix).
func refuseEmptyOf(fs *flag.FlagSet, cmd string, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(names, f.Name) && strings.TrimSpace(f.Value.String()) == "" {
			err = usageErrorf("%s--%s is empty: give a value or leave the flag out", cmd, f.Name)
		}
	})
	return err
}
