// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/hostfs"
)

// TracefsDirs are the places tracefs is mounted, newest first.
var TracefsDirs = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// Field is one field line of a tracefs format file:
//
//	field:int work;	offset:20;	size:4;	signed:1;
type Field struct {
	Decl   string // "int work", "__data_loc char[] dev_name"
	Name   string // "work"
	Offset int
	Size   int
	Signed bool
}

// Format is a parsed tracefs events/<sys>/<event>/format file.
type Format struct {
	Name   string
	ID     int
	Fields []Field // common_* fields included, in file order
}

// Field returns the field called name, or nil.
func (f *Format) Field(name string) *Field {
	for i := range f.Fields {
		if f.Fields[i].Name == name {
			return &f.Fields[i]
		}
	}
	return nil
}

// ParseFormat parses the text of a tracefs format file.
func ParseFormat(b []byte) (*Format, error) {
	f := &Format{ID: -1}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "name:"):
			f.Name = strings.TrimSpace(strings.TrimPrefix(line, "name:"))
		case strings.HasPrefix(line, "ID:"):
			id, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ID:")))
			if err != nil {
				return nil, fmt.Errorf("format: bad ID line %q", line)
			}
			f.ID = id
		case strings.HasPrefix(line, "field:"):
			fld, err := parseField(line)
			if err != nil {
				return nil, err
			}
			f.Fields = append(f.Fields, fld)
		}
	}
	if f.Name == "" || len(f.Fields) == 0 {
		return nil, errors.New("format: no name or no fields: not a tracefs format file")
	}
	return f, nil
}

func parseField(line string) (Field, error) {
	var fld Field
	have := 0
	for _, part := range strings.Split(line, ";") {
		part = strings.TrimSpace(part)
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "field":
			fld.Decl = strings.TrimSpace(v)
			fld.Name = declName(fld.Decl)
			have |= 1
		case "offset":
			fld.Offset, err = strconv.Atoi(v)
			have |= 2
		case "size":
			fld.Size, err = strconv.Atoi(v)
			have |= 4
		case "signed":
			fld.Signed = v == "1"
		}
		if err == nil && (fld.Offset < 0 || fld.Size < 0) {
			err = errors.New("negative")
		}
		if err != nil {
			return fld, fmt.Errorf("format: bad %s in %q", k, line)
		}
	}
	if have != 7 || fld.Name == "" {
		return fld, fmt.Errorf("format: incomplete field line %q", line)
	}
	return fld, nil
}

// declName takes the field name from a C declaration: "unsigned long hist[4]"
// -> "hist", "struct napi_struct * napi" -> "napi".
func declName(decl string) string {
	if i := strings.IndexByte(decl, '['); i >= 0 && strings.HasSuffix(decl, "]") {
		// "char[] name" keeps its brackets before the name; "hist[4]" after.
		if j := strings.LastIndexAny(decl, " *"); j < i {
			decl = decl[:i]
		}
	}
	decl = strings.TrimRight(decl, " ")
	if j := strings.LastIndexAny(decl, " *"); j >= 0 {
		return decl[j+1:]
	}
	return decl
}

// want is what a BPF program's context struct assumes about one field.
type want struct {
	name   string
	offset int
	size   int
}

// Record layouts: the BPF object for 64-bit kernels (observe) and the one
// for 32-bit kernels (observe32), see bpf/observe.c.
const (
	layout64 = 0
	layout32 = 1
)

var layoutNames = [2]string{"64-bit", "32-bit"}

// event describes one tracepoint the BPF object attaches to.
type event struct {
	group, name string
	prog        string    // program name in the ELF
	fields      [2][]want // per layout; must match bpf/observe.c
	perSegment  bool      // fires per packet before GRO: left out in light mode
	btf         string    // its raw BTF tracepoint program (bpf/observe_btf.c), if any
}

// Key is "group:name", as perf and bpftrace spell it.
func (e event) Key() string { return e.group + ":" + e.name }

func same(w []want) [2][]want { return [2][]want{w, w} }

var (
	rxVerbose = [2][]want{
		{{"name", 8, 4}, {"napi_id", 12, 4}, {"len", 52, 4}},
		{{"name", 8, 4}, {"napi_id", 12, 4}, {"len", 44, 4}},
	}
	netDev = [2][]want{
		{{"len", 16, 4}, {"name", 20, 4}},
		{{"len", 12, 4}, {"name", 16, 4}},
	}
	napiPoll = [2][]want{
		{{"napi", 8, 8}, {"dev_name", 16, 4}, {"work", 20, 4}, {"budget", 24, 4}},
		{{"napi", 8, 4}, {"dev_name", 12, 4}, {"work", 16, 4}, {"budget", 20, 4}},
	}
)

// events lists every tracepoint, with the layouts observe.c compiles in, in
// the order they are attached (and detached in reverse): the softirq
// programs first, so napi_poll never runs without them and takes a poll in
// softirq for one in a task.
var events = []event{
	{"irq", "softirq_entry", "tp_softirq_entry", same([]want{{"vec", 8, 4}}), false, "btf_softirq_entry"},
	{"irq", "softirq_exit", "tp_softirq_exit", same([]want{{"vec", 8, 4}}), false, "btf_softirq_exit"},
	{"napi", "napi_poll", "tp_napi_poll", napiPoll, false, "btf_napi_poll"},
	{"net", "napi_gro_receive_entry", "tp_gro_receive", rxVerbose, true, ""},
	{"net", "netif_receive_skb", "tp_receive_skb", netDev, false, "btf_receive_skb"},
	{"net", "netif_receive_skb_entry", "tp_receive_skb_entry", rxVerbose, true, ""},
	{"net", "netif_receive_skb_list_entry", "tp_receive_skb_list_entry", rxVerbose, true, ""},
	{"net", "netif_rx", "tp_netif_rx", netDev, false, "btf_netif_rx"},
	{"irq", "irq_handler_entry", "tp_irq_entry", same([]want{{"irq", 8, 4}}), false, "btf_irq_entry"},
	{"irq", "irq_handler_exit", "tp_irq_exit", same([]want{{"irq", 8, 4}}), false, "btf_irq_exit"},
	{"napi", "dql_stall_detected", "tp_dql_stall", same([]want{{"thrs", 8, 2}, {"len", 12, 4}}), false, ""},
}

// ErrFormatMismatch marks a tracepoint whose record layout differs from the
// ones the BPF programs were compiled for.
var ErrFormatMismatch = errors.New("tracepoint format differs from the compiled-in layouts")

// checkFormat compares a parsed format with the fields a program reads.
func checkFormat(f *Format, ws []want) error {
	var bad []string
	for _, w := range ws {
		got := f.Field(w.name)
		switch {
		case got == nil:
			bad = append(bad, fmt.Sprintf("field %s missing", w.name))
		case got.Offset != w.offset || got.Size != w.size:
			bad = append(bad, fmt.Sprintf("%s at offset %d size %d, program reads offset %d size %d",
				w.name, got.Offset, got.Size, w.offset, w.size))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrFormatMismatch, strings.Join(bad, "; "))
	}
	return nil
}

// chooseLayout returns the first compiled layout that matches f.
func chooseLayout(f *Format, e event) (int, error) {
	var first error
	for l, ws := range e.fields {
		err := checkFormat(f, ws)
		if err == nil {
			return l, nil
		}
		if first == nil {
			first = err
		}
	}
	return -1, first
}

// FindTracefs returns the tracefs directory that holds events/ on f.
func FindTracefs(f *hostfs.FS) (string, error) {
	for _, d := range TracefsDirs {
		if f.IsDir(d + "/events") {
			return d, nil
		}
	}
	return "", fmt.Errorf("tracefs not found at %s: mount it with 'mount -t tracefs nodev /sys/kernel/tracing': %w",
		strings.Join(TracefsDirs, " or "), fs.ErrNotExist)
}

// checkEvent reads the format file of e below tracefs dir and picks the
// compiled layout that matches it. A missing event yields an error
// satisfying errors.Is(err, fs.ErrNotExist); a layout matching none an error
// satisfying errors.Is(err, ErrFormatMismatch), naming the fields that moved
// relative to the 64-bit layout.
func checkEvent(f *hostfs.FS, tracefs string, e event) (int, *Format, error) {
	b, err := f.ReadFile(tracefs + "/events/" + e.group + "/" + e.name + "/format")
	if err != nil {
		return -1, nil, err
	}
	fm, err := ParseFormat(b)
	if err != nil {
		return -1, nil, err
	}
	l, err := chooseLayout(fm, e)
	return l, fm, err
}
