// SPDX-License-Identifier: Apache-2.0
package observe

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
)

// committedSpecs are the committed objects, by bpf2go's name for them.
func committedSpecs(t *testing.T) map[string]*ebpf.CollectionSpec {
	t.Helper()
	specs := map[string]*ebpf.CollectionSpec{}
	for name, load := range map[string]func() (*ebpf.CollectionSpec, error){
		"observe": loadObserve, "observe32": loadObserve32, "observebtf": loadObservebtf,
	} {
		spec, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		specs[name] = spec
	}
	return specs
}

// The sizes user space walks come from bpf/observe.h: its #defines make the
// maps' max_entries in the objects (make bpf-check keeps the objects equal
// to what the C builds), and the Go constants must agree with the objects.
func TestMapSizesMatchTheObjects(t *testing.T) {
	var r Raw
	want := map[string]uint32{
		"gro_fast":      groSlots,            // GRO_SLOTS
		"dev_fast":      devSlots * devKinds, // DEV_SLOTS * DEV_KINDS
		"napi_fast":     napiSlots,           // NAPI_SLOTS
		"softirq_stats": NrVecs,              // NR_VECS
		"lost":          uint32(len(r.Lost)), // the lost counters: napi, rx, irq
	}
	for obj, spec := range committedSpecs(t) {
		for m, n := range want {
			ms := spec.Maps[m]
			if ms == nil {
				t.Errorf("%s has no map %s", obj, m)
			} else if ms.MaxEntries != n {
				t.Errorf("%s: map %s has %d entries in the object (bpf/observe.h), the Go side walks %d", obj, m, ms.MaxEntries, n)
			}
		}
	}
	// HIST_BINS: the histogram in struct napi_val (bpf2go's Go type of it).
	if n := len(observeNapiVal{}.Hist); n != HistBins {
		t.Errorf("struct napi_val has %d histogram bins (HIST_BINS), HistBins is %d", n, HistBins)
	}
	if n := len(observebtfNapiVal{}.Hist); n != HistBins {
		t.Errorf("observe_btf's struct napi_val has %d histogram bins (HIST_BINS), HistBins is %d", n, HistBins)
	}
}

// specSummary is what of an object stays the same from one clang to the
// next (clang 14 and 16 agree on it for these objects; the instructions
// differ): each program's section, type, attach type and target, license
// and the maps it references; each map's type, sizes, flags, entries and
// key and value types.
func specSummary(spec *ebpf.CollectionSpec) []string {
	var out []string
	for name, p := range spec.Programs {
		refs := map[string]bool{}
		for _, ins := range p.Instructions {
			if r := ins.Reference(); r != "" && spec.Maps[r] != nil {
				refs[r] = true
			}
		}
		var maps []string
		for r := range refs {
			maps = append(maps, r)
		}
		sort.Strings(maps)
		out = append(out, fmt.Sprintf("program %s: section %s, type %v, attach %v %q, license %q, maps %s",
			name, p.SectionName, p.Type, p.AttachType, p.AttachTo, p.License, strings.Join(maps, ",")))
	}
	for name, m := range spec.Maps {
		out = append(out, fmt.Sprintf("map %s: type %v, key %d bytes %v, value %d bytes %v, %d entries, flags %#x, pinning %v",
			name, m.Type, m.KeySize, m.Key, m.ValueSize, m.Value, m.MaxEntries, m.Flags, m.Pinning))
	}
	sort.Strings(out)
	return out
}

// make bpf-check (scripts/bpf-check.sh) rebuilds the objects from the C
// into BPF_CHECK_DIR; the committed ones must match them in everything
// that does not depend on the clang version. The script also compares the
// bytes when its clang is the one that built the committed objects.
func TestBPFObjectsMatchRebuild(t *testing.T) {
	dir := os.Getenv("BPF_CHECK_DIR")
	if dir == "" {
		t.Skip("BPF_CHECK_DIR unset: make bpf-check sets it to the objects it rebuilt from bpf/*.c")
	}
	for name, spec := range committedSpecs(t) {
		rebuilt, err := ebpf.LoadCollectionSpec(filepath.Join(dir, name+"_bpfel.o"))
		if err != nil {
			t.Fatalf("the rebuilt %s: %v", name, err)
		}
		if d := diffLines(specSummary(spec), specSummary(rebuilt)); d != "" {
			t.Errorf("%s_bpfel.o differs from what bpf/*.c builds (run make bpf and commit the result):\n%s", name, d)
		}
	}
}

// diffLines lists the lines only in a (-) and only in b (+).
func diffLines(a, b []string) string {
	in := func(s []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var d []string
	for _, x := range a {
		if !inb[x] {
			d = append(d, "  committed: "+x)
		}
	}
	for _, x := range b {
		if !ina[x] {
			d = append(d, "  rebuilt:   "+x)
		}
	}
	return strings.Join(d, "\n")
}

func TestSpecSummaryCatchesAChange(t *testing.T) {
	specs := committedSpecs(t)
	a := specs["observe"]
	b := a.Copy()
	b.Maps["gro_fast"].MaxEntries++
	if diffLines(specSummary(a), specSummary(b)) == "" {
		t.Error("a changed max_entries went unseen")
	}
	b = a.Copy()
	delete(b.Programs, "tp_irq_entry")
	if d := diffLines(specSummary(a), specSummary(b)); !strings.Contains(d, "tp_irq_entry") {
		t.Errorf("a missing program went unseen: %q", d)
	}
	if d := diffLines(specSummary(a), specSummary(a.Copy())); d != "" {
		t.Errorf("a copy differs:\n%s", d)
	}
}
