// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/inputfile"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// StateDir is the journal directory: dir when given (--state-dir), else
// $WIRESPEED_STATE_DIR, else DefaultDir.
func StateDir(dir string) string {
	if dir != "" {
		return dir
	}
	if d := os.Getenv("WIRESPEED_STATE_DIR"); d != "" {
		return d
	}
	return DefaultDir
}

// ActionsFileError says an --actions file cannot be used: missing,
// unreadable, or not a doctor report or list of actions. The CLI makes it
// a usage error.
type ActionsFileError struct{ Err error }

func (e *ActionsFileError) Error() string { return e.Err.Error() }
func (e *ActionsFileError) Unwrap() error { return e.Err }

func actionsFileErrorf(format string, a ...any) error {
	return &ActionsFileError{Err: fmt.Errorf(format, a...)}
}

// LoadActions reads an --actions file: a doctor report (its actions, then
// its findings' fixes' actions), {"actions": [...]}, or a JSON list.
func LoadActions(path string) ([]doctor.Action, error) {
	b, err := inputfile.Read(path, "--actions", inputfile.ActionsLimit)
	var ie *inputfile.Error
	if errors.As(err, &ie) {
		return nil, actionsFileErrorf("%v; nothing was done", ie)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, actionsFileErrorf("--actions %s: %v; give a 'wirespeed doctor --json' report or a JSON list of actions", path, err)
	}
	return ParseActions(b, path)
}

// ParseActions decodes an --actions file's contents (see LoadActions).
// What it returns is still to be held to Check, action by action.
func ParseActions(b []byte, path string) ([]doctor.Action, error) {
	if strings.TrimSpace(string(b)) == "null" {
		// null decodes into an empty list without an error: not a plan.
		return nil, actionsFileErrorf("--actions %s is null: want a 'wirespeed doctor --json' report or a JSON list of actions; nothing was done", path)
	}
	var list []doctor.Action
	if err := json.Unmarshal(b, &list); err == nil {
		return list, conflictingIDs(path, list)
	}
	want := "want a 'wirespeed doctor --json' report or a JSON list of actions"
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, actionsFileErrorf("--actions %s: %s: %v", path, want, err)
	}
	_, hasF := keys["findings"]
	_, hasA := keys["actions"]
	if !hasF && !hasA {
		// An object of another kind is not an empty plan.
		var kind struct {
			Schema string `json:"schema"`
		}
		_ = json.Unmarshal(b, &kind)
		if kind.Schema != "" {
			return nil, actionsFileErrorf("--actions %s is a %s file, not a doctor report: %s; nothing was done", path, kind.Schema, want)
		}
		return nil, actionsFileErrorf("--actions %s has neither \"findings\" nor \"actions\": %s; nothing was done", path, want)
	}
	var obj struct {
		Host     string           `json:"host"`
		Kernel   string           `json:"kernel"`
		Source   doctor.Source    `json:"source"`
		Findings []doctor.Finding `json:"findings"`
		Actions  []doctor.Action  `json:"actions"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, actionsFileErrorf("--actions %s: %s: %v", path, want, err)
	}
	if err := sameHost(path, obj.Host, obj.Kernel); err != nil {
		return nil, err
	}
	list = obj.Actions
	for _, f := range obj.Findings {
		if f.Fix != nil {
			list = append(list, f.Fix.Actions...)
		}
	}
	return list, conflictingIDs(path, list)
}

// conflictingIDs refuses two different actions under one id: which one
// the user meant cannot be guessed. The same action listed twice (two
// findings proposing it) is one action.
func conflictingIDs(path string, list []doctor.Action) error {
	seen := map[string]doctor.Action{}
	for _, a := range list {
		if b, ok := seen[a.ID]; ok && (a.Kind != b.Kind || a.Device != b.Device || a.Target != b.Target || a.Value != b.Value) {
			return actionsFileErrorf("--actions %s names two different actions with id %q (%s %s = %s, and %s %s = %s): give each its own id; nothing was done", path, a.ID, b.Kind, b.Target, b.Value, a.Kind, a.Target, a.Value)
		}
		seen[a.ID] = a
	}
	return nil
}

// sameHost refuses a doctor report made on another host or kernel: its
// devices, IRQ numbers and CPU lists are that host's.
func sameHost(path, host, kernel string) error {
	here, _ := os.Hostname()
	if host != "" && here != "" && host != here {
		return actionsFileErrorf("--actions %s is doctor's report of host %q, this is %q: its devices, IRQs and CPUs are that host's; run 'wirespeed doctor --json' here (or apply the report on %s); nothing was done", path, host, here, host)
	}
	var u unix.Utsname
	if kernel != "" && unix.Uname(&u) == nil {
		if rel := unix.ByteSliceToString(u.Release[:]); rel != kernel {
			return actionsFileErrorf("--actions %s was diagnosed on kernel %s, this host runs %s: IRQ numbers and NAPI ids change with the kernel; run 'wirespeed doctor --json' again; nothing was done", path, kernel, rel)
		}
	}
	return nil
}

// PlanActions returns the actions to try, in order: doctor's for this host
// (or file's, when file is not ""), only for the named devices when some
// are named, each id once. A device this host does not have is an error
// that wraps inspect.ErrUnknownInterface.
func PlanActions(ctx context.Context, ifaces []string, file string) ([]doctor.Action, error) {
	var acts []doctor.Action
	if file != "" {
		var err error
		if acts, err = LoadActions(file); err != nil {
			return nil, err
		}
	} else {
		snap, err := inspect.Collect(ctx, inspect.Options{Ifaces: ifaces})
		if err != nil {
			return nil, err
		}
		rep, err := doctor.Diagnose(&doctor.Input{Snap: snap, Ifaces: ifaces})
		if err != nil {
			return nil, err
		}
		for _, f := range rep.Findings {
			if f.Fix != nil {
				acts = append(acts, f.Fix.Actions...)
			}
		}
	}
	return dedupe(acts, ifaces), nil
}

// dedupe keeps the first action of each id, and with ifaces given only
// those for a named device (or for none).
func dedupe(acts []doctor.Action, ifaces []string) []doctor.Action {
	seen := map[string]bool{}
	var out []doctor.Action
	for _, a := range acts {
		if len(ifaces) > 0 && a.Device != "" && !slices.Contains(ifaces, a.Device) {
			continue // never a device the user did not name
		}
		if seen[a.ID] {
			continue
		}
		seen[a.ID] = true
		out = append(out, a)
	}
	return out
}

// PlanRow is one line of 'tune plan': the action, its target's value now,
// or why the action is malformed.
type PlanRow struct {
	N       int           `json:"n"`
	Action  doctor.Action `json:"action"`
	Now     string        `json:"now,omitempty"`
	Invalid string        `json:"invalid,omitempty"`
}

// Preview checks every action and reads its target on s; it changes nothing.
func Preview(ctx context.Context, s *System, acts []doctor.Action) []PlanRow {
	rows := []PlanRow{}
	for i, a := range acts {
		r := PlanRow{N: i + 1, Action: a}
		if err := Check(a); err != nil {
			r.Invalid = err.Error()
		} else if now, err := Read(ctx, s, a); err == nil {
			r.Now = strings.TrimSpace(now)
		}
		rows = append(rows, r)
	}
	return rows
}

// ApplyStatic applies every action without measuring and keeps what it
// applied (a static profile). It goes on after a failure; the error joins
// every failure and every value the kernel refused.
func (t *Tuner) ApplyStatic(ctx context.Context, acts []doctor.Action, progress func(string)) ([]Outcome, error) {
	outs := []Outcome{}
	var errs []error
	for i, a := range acts {
		if progress != nil {
			progress(fmt.Sprintf("[%d/%d] %s", i+1, len(acts), a.ID))
		}
		left := t.Leftover(a)
		var leftSeq int
		if left >= 0 {
			leftSeq = t.Store.J.Entries[left].Seq
		}
		o, err := t.Apply(ctx, a)
		if err == nil && (o.State == StateApplied || o.State == StateAlready) {
			// A static run keeps what it applies: mark it so, or a later
			// run would take it for the leftover of an interrupted one.
			if left >= 0 && o.State == StateAlready {
				o.Note = fmt.Sprintf("left in force by an interrupted tune (journal entry %d); kept now", leftSeq)
			}
			if kerr := t.Keep(a.ID); kerr != nil {
				err = kerr
			}
		}
		if err != nil {
			errs = append(errs, err)
			if o.State == "" {
				o.State, o.Note = StateFailed, err.Error()
			}
		} else if o.State == StateRefused {
			errs = append(errs, fmt.Errorf("%s: the kernel refused %s: %s", a.ID, a.Value, o.Note))
		}
		outs = append(outs, o)
	}
	return outs, errors.Join(errs...)
}

// UnknownIDs lists the ids no entry of j has.
func (j *Journal) UnknownIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		found := false
		for _, e := range j.Entries {
			found = found || e.Action.ID == id
		}
		if !found {
			out = append(out, id)
		}
	}
	return out
}
