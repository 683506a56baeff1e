// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/wirespeed/wirespeed/internal/tune"
)

// tune status, revert and persist: the commands that work from the journal.

func runTuneStatus(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := refuseEmpty(fs, "tune status"); err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("tune status takes no arguments (got %q): it shows every change in the journal", pos[0])
	}
	j, err := tune.Load(tune.StateDir(*c.stateDir))
	if err != nil {
		return err
	}
	st := tune.StatusOf(ctx, tune.Live(), j)
	if st == nil {
		st = []tune.Status{}
	}
	if *c.asJSON {
		return writeJSON(env, map[string]any{"journal_version": j.Version, "changes": st})
	}
	if len(st) == 0 {
		fmt.Fprintln(env.Stdout, "wirespeed has no change in force (journal: "+tune.StateDir(*c.stateDir)+").")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTARGET\tWAS\tSET\tNOW\tKEPT\tSINCE\tPROBLEM")
	for _, s := range st {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\n", s.Action.ID, s.Action.Target, oneLine(s.Old), s.Action.Value, oneLine(s.Now), s.Kept, s.Time, s.Problem)
	}
	tw.Flush()
	return nil
}

func runTuneRevert(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	all := fs.Bool("all", false, "revert every change in the journal")
	keep := fs.Bool("keep", false, "with action ids: put nothing back; leave their changes in force as decided, so later runs stop taking them for an interrupted tune's (a change that cannot be put back, or one you want)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := refuseEmpty(fs, "tune revert"); err != nil {
		return err
	}
	if *all == (len(pos) > 0) {
		return usageErrorf("tune revert: give action ids or --all")
	}
	if *keep && *all {
		return usageErrorf("tune revert --keep: name the action ids to keep (not --all)")
	}
	if err := tuneNeedRoot("revert"); err != nil {
		return err
	}
	// Unknown ids are refused before the state directory is touched.
	if j, err := tune.Load(tune.StateDir(*c.stateDir)); err != nil {
		return err
	} else if unknown := j.UnknownIDs(pos); len(unknown) > 0 {
		return &UsageError{Err: fmt.Errorf("%w; nothing was reverted", &tune.UnknownIDError{IDs: unknown})}
	}
	t, err := tune.New(tune.StateDir(*c.stateDir), tune.Live())
	if err != nil {
		return err
	}
	defer t.Close()
	if *keep {
		for _, id := range pos {
			if err := t.Keep(id); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "kept %s: left in force, no longer taken for an interrupted tune's\n", id)
		}
		return nil
	}
	outs, err := t.Revert(ctx, pos, *all)
	var ue *tune.UnknownIDError
	if errors.As(err, &ue) {
		return &UsageError{Err: fmt.Errorf("%w; nothing was reverted", err)}
	}
	if outs == nil {
		outs = []tune.Outcome{}
	}
	if *c.asJSON {
		if jerr := writeJSON(env, map[string]any{"outcomes": outs}); jerr != nil {
			return jerr
		}
	} else if len(outs) == 0 && err == nil {
		fmt.Fprintln(env.Stdout, "Nothing to revert.")
	} else {
		writeOutcomes(env, outs)
	}
	return err
}

func runTunePersist(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	remove := fs.Bool("remove", false, "remove every file an earlier persist wrote")
	rootDir := fs.String("root", "/", "write the files below this directory instead of / (for a test or an image)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := refuseEmpty(fs, "tune persist"); err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("tune persist takes no arguments (got %q): it makes every kept change permanent", pos[0])
	}
	if fi, err := os.Stat(*rootDir); err != nil || !fi.IsDir() {
		return usageErrorf("tune persist: --root %q is not an existing directory: create it first (persist writes below it, never creates it)", *rootDir)
	}
	if *rootDir == "/" {
		if err := tuneNeedRoot("persist"); err != nil {
			return err
		}
	}
	dir := tune.StateDir(*c.stateDir)
	if *remove {
		removed, err := tune.RemovePersist(*rootDir, dir)
		if removed == nil {
			removed = []string{}
		}
		if *c.asJSON {
			if jerr := writeJSON(env, map[string]any{"removed": removed}); jerr != nil {
				return jerr
			}
		} else {
			for _, f := range removed {
				fmt.Fprintln(env.Stdout, "removed "+f)
			}
			if len(removed) == 0 && err == nil {
				fmt.Fprintln(env.Stdout, "Nothing to remove.")
			}
		}
		return err
	}
	st, err := tune.Open(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	netns, _ := os.Readlink("/proc/self/ns/net")
	plan := tune.PlanPersist(tune.Live(), st.J, netns)
	if len(plan.Files) == 0 {
		if len(plan.Skipped) > 0 {
			return fmt.Errorf("nothing to make permanent here, nothing was written: %s", strings.Join(plan.Skipped, "; "))
		}
		return fmt.Errorf("no applied change in the journal to make permanent ('wirespeed tune status')")
	}
	files, err := tune.WritePersist(*rootDir, dir, plan)
	if err != nil {
		return err
	}
	if *c.asJSON {
		return writeJSON(env, map[string]any{"root": *rootDir, "files": files, "skipped": plan.Skipped})
	}
	for _, f := range files {
		// Name the file where it is: --root may have sent it elsewhere.
		fmt.Fprintln(env.Stdout, "wrote "+filepath.Join(*rootDir, f))
	}
	for _, s := range plan.Skipped {
		fmt.Fprintln(env.Stdout, "skipped "+s)
	}
	fmt.Fprintln(env.Stdout, "\nThey take effect at the next boot or re-plug; now: udevadm control --reload; systemctl daemon-reload; sysctl --system.")
	return nil
}

// refuseEmpty refuses a flag given with an empty value: an empty
// --state-dir or --actions is not "the default". (apply has its own list.)
func refuseEmpty(fs *flag.FlagSet, cmd string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && f.Name != "json" && f.Name != "all" && f.Name != "remove" && strings.TrimSpace(f.Value.String()) == "" {
			err = usageErrorf("%s: --%s is empty: give a value or leave the flag out; nothing was done", cmd, f.Name)
		}
	})
	return err
}
