// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Every evidence field a finding cites must resolve in the JSON of its
// source (run calls checkTraceable on every report).

// splitPath splits at dots outside brackets: host.sysctls[net.core.x].value.
func splitPath(p string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range p {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				out = append(out, p[start:i])
				start = i + 1
			}
		}
	}
	return append(out, p[start:])
}

var pathElem = regexp.MustCompile(`^([a-z_]+)(?:\[([^\]]+)\])?$`)

// checkTraceable resolves every evidence field in the JSON of the source it
// names: each must point at something that exists.
func checkTraceable(t *testing.T, in *Input, rep *Report) {
	t.Helper()
	toMap := func(v any) any {
		b, _ := json.Marshal(v)
		var m any
		json.Unmarshal(b, &m)
		return m
	}
	snap, obs := toMap(in.Snap), toMap(in.Obs)
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			root := snap
			if e.Source == FromObservation {
				root = obs
			}
			if err := resolve(root, e.Field); err != nil {
				t.Errorf("%s: evidence %s (%s) does not resolve: %v", f.ID, e.Field, e.Source, err)
			}
		}
	}
}

func resolve(v any, path string) error {
	for _, part := range splitPath(path) {
		m := pathElem.FindStringSubmatch(part)
		if m == nil {
			return fmt.Errorf("bad element %q", part)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not an object", part)
		}
		if v, ok = obj[m[1]]; !ok {
			return fmt.Errorf("no key %s", m[1])
		}
		if m[2] == "" {
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: not an array", m[1])
		}
		key := m[2]
		if key == "*" {
			if len(arr) == 0 {
				return fmt.Errorf("%s: empty", m[1])
			}
			v = arr[0]
			continue
		}
		k, val, hasEq := strings.Cut(key, "=")
		var found any
		for _, el := range arr {
			o, _ := el.(map[string]any)
			for _, field := range []string{"name", "irq", "cpu", "napi", "pid"} {
				if hasEq && field != k {
					continue
				}
				want := key
				if hasEq {
					want = val
				}
				if x, ok := o[field]; ok && fmt.Sprint(x) == want {
					found = el
				}
			}
		}
		if found == nil {
			return fmt.Errorf("%s: no element %s", m[1], key)
		}
		v = found
	}
	return nil
}
