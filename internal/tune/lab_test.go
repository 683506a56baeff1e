// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// TestLabChildArgv: the re-run inside the receiver names its device, a
// state directory of its own and the sender namespace, and carries the
// user's flags without --lab (or it would build a lab inside the lab).
func TestLabChildArgv(t *testing.T) {
	got := strings.Join(labChildArgv("ws-1-r", "/tmp/s", "ws-1-snd", []string{"--lab", "--gro=false", "-lab", "--pairs", "3"}), " ")
	want := "tune apply ws-1-r --state-dir /tmp/s --lab-sender-ns ws-1-snd --gro=false --pairs 3"
	if got != want {
		t.Errorf("argv\n got %s\nwant %s", got, want)
	}
}

// TestSelect: --only keeps the named actions in the order named and names
// the ids the plan lacks.
func TestSelect(t *testing.T) {
	plan := []doctor.Action{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	sel, unknown := Select(plan, []string{"c", "nope", "a"})
	var ids []string
	for _, a := range sel {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, []string{"c", "a"}) || !slices.Equal(unknown, []string{"nope"}) {
		t.Errorf("selected %v, unknown %v", ids, unknown)
	}
}

// TestReapLabStates: a killed lab tune's journal directory is removed by
// the next one; a live owner's and a foreign directory are kept.
func TestReapLabStates(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	dead.Run()
	for _, n := range []string{
		fmt.Sprintf("wirespeed-tune-lab-%d-1", dead.Process.Pid),
		fmt.Sprintf("wirespeed-tune-lab-%d-2", os.Getpid()),
		"wirespeed-tune-lab-abc",
	} {
		os.Mkdir(filepath.Join(tmp, n), 0o700)
	}
	reapLabStates(tmp)
	ents, _ := os.ReadDir(tmp)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	want := []string{fmt.Sprintf("wirespeed-tune-lab-%d-2", os.Getpid()), "wirespeed-tune-lab-abc"}
	if !reflect.DeepEqual(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
}
