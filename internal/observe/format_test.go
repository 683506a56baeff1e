// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/hostfs"
)

func TestCompiledLayoutsMatchCapturedFormats(t *testing.T) {
	f := hostfs.Dir("testdata/host-6.18-x86_64")
	dir, err := FindTracefs(f)
	if err != nil || dir != "/sys/kernel/tracing" {
		t.Fatalf("FindTracefs = %q, %v", dir, err)
	}
	for _, e := range events {
		l, fm, err := checkEvent(f, dir, e)
		if err != nil {
			t.Errorf("%s: %v", e.Key(), err)
			continue
		}
		if l != layout64 {
			t.Errorf("%s: layout %s chosen on a 64-bit kernel", e.Key(), layoutNames[l])
		}
		if fm.Name != e.name || fm.ID <= 0 {
			t.Errorf("%s: parsed name %q id %d", e.Key(), fm.Name, fm.ID)
		}
	}
}

func TestParseFormatFields(t *testing.T) {
	f := hostfs.Dir("testdata/host-6.18-x86_64")
	b, err := f.ReadFile("/sys/kernel/tracing/events/napi/dql_stall_detected/format")
	if err != nil {
		t.Fatal(err)
	}
	fm, err := ParseFormat(b)
	if err != nil {
		t.Fatal(err)
	}
	if fm.ID != 2290 || len(fm.Fields) != 10 {
		t.Fatalf("id %d, %d fields: %+v", fm.ID, len(fm.Fields), fm.Fields)
	}
	for _, c := range []Field{
		{"unsigned short common_type", "common_type", 0, 2, false},
		{"int common_pid", "common_pid", 4, 4, true},
		{"unsigned short thrs", "thrs", 8, 2, false},
		{"unsigned long hist[4]", "hist", 40, 32, false},
	} {
		got := fm.Field(c.Name)
		if got == nil || *got != c {
			t.Errorf("field %s = %+v, want %+v", c.Name, got, c)
		}
	}
	b, _ = f.ReadFile("/sys/kernel/tracing/events/napi/napi_poll/format")
	fm, _ = ParseFormat(b)
	if got := fm.Field("dev_name"); got == nil || got.Decl != "__data_loc char[] dev_name" || got.Offset != 16 {
		t.Errorf("dev_name = %+v", got)
	}
	if got := fm.Field("napi"); got == nil || got.Size != 8 {
		t.Errorf("napi = %+v", got)
	}
}

func TestDeclName(t *testing.T) {
	for decl, want := range map[string]string{
		"int work":                   "work",
		"struct napi_struct * napi":  "napi",
		"__data_loc char[] dev_name": "dev_name",
		"unsigned long hist[4]":      "hist",
		"const void * skbaddr":       "skbaddr",
		"char comm[16]":              "comm",
	} {
		if got := declName(decl); got != want {
			t.Errorf("declName(%q) = %q, want %q", decl, got, want)
		}
	}
}

func TestParseFormatRejectsGarbage(t *testing.T) {
	for _, in := range []string{
		"",
		"name: x\nID: 1\nformat:\n",
		"name: x\nID: y\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsigned:1;\n",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:eight;\tsize:4;\tsigned:1;\n",
	} {
		if _, err := ParseFormat([]byte(in)); err == nil {
			t.Errorf("ParseFormat(%q) accepted it", in)
		}
	}
}

// A 32-bit kernel's napi_poll (4-byte pointer) moves every later field: the
// 32-bit object's layout is chosen; a layout matching neither is refused
// with the moved fields named.
func eventNamed(t *testing.T, name string) event {
	t.Helper()
	for _, e := range events {
		if e.name == name {
			return e
		}
	}
	t.Fatalf("no event %s", name)
	return event{}
}

func TestLayoutChoiceAndRefusal(t *testing.T) {
	f := hostfs.Dir("testdata/host-armhf-constructed")
	dir, err := FindTracefs(f)
	if err != nil || dir != "/sys/kernel/debug/tracing" {
		t.Fatalf("FindTracefs = %q, %v", dir, err)
	}
	l, fm, err := checkEvent(f, dir, eventNamed(t, "napi_poll"))
	if err != nil || l != layout32 {
		t.Fatalf("armhf napi_poll: layout %d, err %v; want the 32-bit layout", l, err)
	}
	// Move work once more: no compiled layout fits.
	fm.Field("work").Offset = 24
	_, err = chooseLayout(fm, eventNamed(t, "napi_poll"))
	if !errors.Is(err, ErrFormatMismatch) {
		t.Fatalf("err = %v, want ErrFormatMismatch", err)
	}
	for _, s := range []string{"napi at offset 8 size 4, program reads offset 8 size 8", "work at offset 24 size 4, program reads offset 20"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	// An event without a format file is missing, not mismatched.
	_, _, err = checkEvent(f, dir, eventNamed(t, "napi_gro_receive_entry"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing event: err = %v, want fs.ErrNotExist", err)
	}
	// A field that is gone.
	fm = &Format{Name: "x", Fields: []Field{{Name: "len", Offset: 16, Size: 4}}}
	if _, err := chooseLayout(fm, eventNamed(t, "netif_receive_skb")); err == nil || !strings.Contains(err.Error(), "field name missing") {
		t.Errorf("format without name: %v", err)
	}
}

// The 32-bit layouts, derived from the kernel's TP_STRUCT__entry, are what
// the 64-bit format files give once every pointer shrinks to 4 bytes.
func TestLayout32FollowsFromLayout64(t *testing.T) {
	ptrs := map[string]bool{"napi": true, "skbaddr": true}
	f := hostfs.Dir("testdata/host-6.18-x86_64")
	for _, e := range events {
		b, err := f.ReadFile("/sys/kernel/tracing/events/" + e.group + "/" + e.name + "/format")
		if err != nil {
			t.Fatal(err)
		}
		fm, _ := ParseFormat(b)
		// Recompute offsets with 4-byte pointers and natural alignment.
		off := map[string]int{}
		pos := 0
		for _, fl := range fm.Fields {
			size, align := fl.Size, fl.Size
			if ptrs[fl.Name] || strings.Contains(fl.Decl, "*") {
				size, align = 4, 4
			}
			if strings.HasPrefix(fl.Decl, "__data_loc") || strings.Contains(fl.Decl, "[") {
				align = 4
				if strings.HasPrefix(fl.Decl, "unsigned long") {
					size = fl.Size / 2
				}
			}
			if strings.HasPrefix(fl.Decl, "unsigned long ") && !strings.Contains(fl.Decl, "[") {
				size, align = 4, 4
			}
			if align > 4 {
				align = 4
			}
			if align > 0 && pos%align != 0 {
				pos += align - pos%align
			}
			if fl.Name == "common_type" {
				pos = 0
			}
			off[fl.Name] = pos
			pos += size
		}
		for _, w := range e.fields[layout32] {
			if off[w.name] != w.offset {
				t.Errorf("%s.%s: 32-bit layout says offset %d, derivation %d", e.Key(), w.name, w.offset, off[w.name])
			}
		}
	}
}

func TestNoTracefs(t *testing.T) {
	_, err := FindTracefs(hostfs.Dir(t.TempDir()))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "mount -t tracefs") {
		t.Errorf("err = %v", err)
	}
}
