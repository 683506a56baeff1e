// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
	"github.com/wirespeed/wirespeed/internal/testfiles"
)

// The RX path is read from files other versions wrote (--from, --result):
// a text this version does not know gets no class - not the class its words
// begin with - and doctor says so under skipped instead of guessing.
func TestRXPathFromOtherVersions(t *testing.T) {
	const placeholder = "PLACEHOLDER"
	snapWith := func(t *testing.T, rxPath string) *inspect.Snapshot {
		s := fixture(t, "firecracker-veth-threaded")
		d := dev(t, s, "ws-fx1")
		d.NAPIs, d.Threads = nil, nil
		d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.No}, OwnNAPI: inspect.Tri{State: datapath.No},
			RXPath: datapath.ParsePath(placeholder)}
		setOffload(d, "rx-gro", false, false)
		d.Stats.RxPackets = ptr(uint64(5000))
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte(`"rx_path":"`+placeholder+`"`), []byte(`"rx_path":`+quote(rxPath)), 1)
		var out inspect.Snapshot
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return &out
	}
	obsWith := func(t *testing.T, rxPath string) *observe.Observation {
		var o observe.Observation
		js := `{"devices":[{"name":"ws-fx1","rx_path":` + quote(rxPath) + `,"netif_rx":5000,"netif_rx_per_s":500,` +
			`"delivered_skbs":5000,"delivered_bytes":7000000}]}`
		if err := json.Unmarshal([]byte(js), &o); err != nil {
			t.Fatal(err)
		}
		return &o
	}
	for _, c := range []struct {
		name    string
		in      func(t *testing.T) *Input
		fire    bool
		skipped string // a skipped entry for ws-fx1 naming this text
	}{
		{"snapshot: no NAPI", func(t *testing.T) *Input { return &Input{Snap: snapWith(t, "no NAPI registered")} }, true, ""},
		{"snapshot: a newer text that begins the same", func(t *testing.T) *Input {
			return &Input{Snap: snapWith(t, "no NAPI registered (napi-get v2)")}
		}, false, "no NAPI registered (napi-get v2)"},
		{"snapshot: an unknown class", func(t *testing.T) *Input { return &Input{Snap: snapWith(t, "NAPI + XDP (busy-poll)")} }, false, "NAPI + XDP (busy-poll)"},
		{"observation: netif_rx wins over the snapshot's NAPI", func(t *testing.T) *Input {
			return &Input{Snap: fixture(t, "firecracker-veth-threaded"), Obs: obsWith(t, "netif_rx backlog (no NAPI, no GRO)")}
		}, true, ""},
		{"observation: a text this version does not know", func(t *testing.T) *Input {
			return &Input{Snap: fixture(t, "firecracker-veth-threaded"), Obs: obsWith(t, "netif_rx backlog (no NAPI, no GRO, busy-poll)")}
		}, false, "netif_rx backlog (no NAPI, no GRO, busy-poll)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, rep := run(t, c.in(t), "rx-no-napi")
			if (len(got) > 0) != c.fire {
				t.Errorf("rx-no-napi fired %v, want %v", len(got) > 0, c.fire)
			}
			var sk []string
			for _, s := range rep.Skipped {
				if s.Rule == "*" {
					sk = append(sk, s.Device+": "+s.Reason)
				}
			}
			switch {
			case c.skipped == "" && len(sk) > 0:
				t.Errorf("skipped %q", sk)
			case c.skipped != "" && (len(sk) != 1 || !strings.HasPrefix(sk[0], "ws-fx1: ") || !strings.Contains(sk[0], quote(c.skipped))):
				t.Errorf("skipped %q, want one for ws-fx1 naming %q", sk, c.skipped)
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// storedFiles yields each file's name and bytes; an experiment's run
// archive (experiments/NAME/data/RUN.tar.gz) yields each JSON file in it,
// named ARCHIVE:PATH.
func storedFiles(t *testing.T, files []string) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(p, ".tar.gz") {
				if !yield(p, b) {
					return
				}
				continue
			}
			tb, err := testfiles.Decode(p, b)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			tr := tar.NewReader(bytes.NewReader(tb))
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				if h.Typeflag != tar.TypeReg || !(strings.HasSuffix(h.Name, ".json") || strings.HasSuffix(h.Name, ".json.gz")) {
					continue
				}
				m, err := io.ReadAll(tr)
				if err != nil {
					t.Fatalf("%s: %s: %v", p, h.Name, err)
				}
				if !yield(p+":"+h.Name, m) {
					return
				}
			}
		}
	}
}

// Every snapshot and observation stored in the repository (bench results,
// every experiment's raw data under experiments/, in its runs' archives
// too, the report's fixture) reads
// into the typed model: each rx_path is one this version knows, and the
// rx_path and tri-state values written back are the ones read.
func TestStoredFilesReadBack(t *testing.T) {
	var files []string
	for _, root := range []string{"../../experiments", "../../testdata", "../report/testdata"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			run := filepath.Base(filepath.Dir(p)) == "data" && strings.HasSuffix(p, ".tar.gz")
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz") || run) {
				files = append(files, p)
			}
			return nil
		})
	}
	var snaps, obs, paths int
	for p, b := range storedFiles(t, files) {
		b, err := testfiles.Decode(p, b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !bytes.Contains(b, []byte(`"rx_path"`)) {
			continue
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			continue // not JSON of ours (a tool's output kept as data)
		}
		walk(doc, func(m map[string]any) {
			schema, _ := m["schema"].(string)
			var typed any
			switch schema {
			case inspect.SchemaVersion:
				typed, snaps = &inspect.Snapshot{}, snaps+1
			case observe.SchemaVersion:
				typed, obs = &observe.Observation{}, obs+1
			default:
				return
			}
			raw, _ := json.Marshal(m)
			if err := json.Unmarshal(raw, typed); err != nil {
				t.Errorf("%s: %s does not read: %v", p, schema, err)
				return
			}
			back, err := json.Marshal(typed)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			var again any
			if err := json.Unmarshal(back, &again); err != nil {
				t.Fatal(err)
			}
			// A tri-state the file lacks (irqbalance before inspect asked)
			// is read as unknown and written as such: the only addition.
			before, after := facts(m), facts(again)
			had := map[string]bool{}
			for _, f := range before {
				had[strings.SplitN(f, "=", 2)[0]] = true
			}
			after = slices.DeleteFunc(after, func(f string) bool {
				k, v, _ := strings.Cut(f, "=")
				return !had[k] && strings.HasSuffix(k, ".state") && v == "unknown"
			})
			if !reflect.DeepEqual(before, after) {
				t.Errorf("%s: %s: facts read %q, written back %q", p, schema, before, after)
			}
			for _, f := range before {
				if v, ok := strings.CutPrefix(f, "rx_path="); ok {
					paths++
					if datapath.ParsePath(v).Class() == datapath.Unrecognised {
						t.Errorf("%s: rx_path %q is not one this version knows", p, v)
					}
				}
			}
		})
	}
	// the repository holds hundreds (383 snapshots, 339 observations on
	// 2026-11-24): far fewer means the stored files moved away from the roots
	if snaps < 100 || obs < 100 || paths < 100 {
		t.Fatalf("read %d snapshots and %d observations with %d rx paths: the stored files moved?", snaps, obs, paths)
	}
	t.Logf("%d files, %d snapshots, %d observations, %d rx paths", len(files), snaps, obs, paths)
}

// walk calls f on every object in v, outermost first.
func walk(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, c := range x {
			walk(c, f)
		}
	case []any:
		for _, c := range x {
			walk(c, f)
		}
	}
}

// facts lists the rx_path values and the tri-states ({"state": ...} with
// at most an evidence beside it) in v, in a stable order.
func facts(v any) []string {
	var out []string
	var rec func(path string, v any)
	rec = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["state"].(string); ok && len(x) <= 2 {
				if _, ev := x["evidence"]; len(x) == 1 || ev {
					out = append(out, path+".state="+s)
				}
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if s, ok := x[k].(string); ok && k == "rx_path" {
					out = append(out, "rx_path="+s)
				}
				rec(path+"."+k, x[k])
			}
		case []any:
			for _, c := range x {
				rec(path+"[]", c)
			}
		}
	}
	rec("", v)
	return out
}
