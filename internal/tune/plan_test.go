// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

func TestLoadActions(t *testing.T) {
	dir := t.TempDir()
	file := func(s string) string {
		p := filepath.Join(dir, "f.json")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A doctor report: its actions first, then each finding's fix's.
	got, err := LoadActions(file(`{"actions":[{"id":"a"}],"findings":[{"fix":{"actions":[{"id":"b"},{"id":"c"}]}},{"id":"nofix"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range got {
		ids = append(ids, a.ID)
	}
	if !reflect.DeepEqual(ids, []string{"a", "b", "c"}) {
		t.Errorf("report: ids %v, want a b c", ids)
	}
	if got, err := LoadActions(file(`[{"id":"x","kind":"sysfs"}]`)); err != nil || len(got) != 1 || got[0].Kind != doctor.KindSysfs {
		t.Errorf("list: %+v %v", got, err)
	}
	for _, c := range []struct{ in, msg string }{
		{`{}`, "neither"},
		{`{"schema":"wirespeed.bench/v3"}`, "is a wirespeed.bench/v3 file"},
		{`"rps"`, "doctor --json"},
		{`{"actions":"rps"}`, "doctor --json"},
	} {
		_, err := LoadActions(file(c.in))
		var fe *ActionsFileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want an ActionsFileError mentioning %q", c.in, err, c.msg)
		}
	}
	_, err = LoadActions(filepath.Join(dir, "missing.json"))
	var fe *ActionsFileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "missing.json: no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestDedupeKeepsFirstAndNamedDevices(t *testing.T) {
	acts := []doctor.Action{
		{ID: "rps/eth9", Device: "eth9", Value: "3"},
		{ID: "rps/eth8", Device: "eth8"},
		{ID: "budget"},
		{ID: "rps/eth9", Device: "eth9", Value: "f"},
	}
	got := dedupe(acts, []string{"eth9"})
	if len(got) != 2 || got[0].ID != "rps/eth9" || got[0].Value != "3" || got[1].ID != "budget" {
		t.Errorf("dedupe for eth9: %+v", got)
	}
	if got := dedupe(acts, nil); len(got) != 3 {
		t.Errorf("dedupe for all devices: %+v", got)
	}
}

func TestPreviewChangesNothing(t *testing.T) {
	s := tree(t)
	bad := doctor.Action{ID: "bad", Kind: doctor.KindSysfs, Device: "eth9", Target: "/etc/passwd", Value: "x"}
	rows := Preview(context.Background(), s, []doctor.Action{rpsAction("3"), bad})
	if len(rows) != 2 || rows[0].N != 1 || rows[0].Now != "00000000" || rows[0].Invalid != "" {
		t.Errorf("row 1: %+v", rows)
	}
	if len(rows) == 2 && (rows[1].Invalid == "" || rows[1].Now != "") {
		t.Errorf("a malformed action is not marked invalid: %+v", rows[1])
	}
	if v := s.mustRead(t, rps); v != "00000000\n" {
		t.Errorf("preview wrote %q", v)
	}
}

func TestApplyStaticKeepsWhatItApplied(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	bad := doctor.Action{ID: "bad", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/missing", Value: "1"}
	var progress []string
	outs, err := tu.ApplyStatic(context.Background(), []doctor.Action{rpsAction("3"), bad}, func(s string) { progress = append(progress, s) })
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("a failed action is not in the error: %v", err)
	}
	if len(outs) != 2 || outs[0].State != StateApplied || outs[1].State == StateApplied {
		t.Fatalf("outcomes: %+v", outs)
	}
	if !reflect.DeepEqual(progress, []string{"[1/2] rps/eth9/rx-0", "[2/2] bad"}) {
		t.Errorf("progress: %q", progress)
	}
	if v := s.mustRead(t, rps); strings.TrimSpace(v) != "3" {
		t.Errorf("rps_cpus is %q after the static apply", v)
	}
	// Kept, so a later run does not take it for an interrupted run's leftover.
	if i := tu.Leftover(rpsAction("3")); i >= 0 {
		t.Errorf("the applied action is a leftover (entry %d), not kept", i)
	}
	if u := tu.Store.J.UnknownIDs([]string{"rps/eth9/rx-0", "nope"}); !reflect.DeepEqual(u, []string{"nope"}) {
		t.Errorf("UnknownIDs: %v", u)
	}
}
