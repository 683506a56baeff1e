// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

func init() {
	register(&Command{
		Name:    "inspect",
		Summary: "show the datapath of each network device: NAPI, IRQs, queues, GRO, BQL, RPS/XPS, CPUs",
		Usage: `wirespeed inspect [IFACE...] [--json] [--save FILE.tar.gz | --from FILE.tar.gz]

Shows, per network device, how received packets reach the stack (usbnet's
netif_rx backlog or a NAPI, in softirq or its own thread), its NAPI
instances and their threads' CPUs, offloads (GRO, TSO, GSO, LRO), queues
(RPS, XPS, BQL), the interrupts that serve it (for a USB NIC, the host
controller's, and what else shares them) and whether their affinity can be
changed; and for the host the kernel's datapath features, CPUs and
frequency, softnet counters and net.core sysctls.

Read-only: nothing is changed. As root, each IRQ's smp_affinity is probed
with a mask the kernel rejects before applying it.

--save writes what this run read (files and netlink answers) to a snapshot
that --from shows on any machine, as it was.`,
		Run: runInspect,
	})
}

func runInspect(ctx context.Context, env Env, args []string) error {
	c := commands["inspect"]
	fs := newFlagSet(c, env)
	asJSON := fs.Bool("json", false, "print JSON (schema "+inspect.SchemaVersion+", see docs/inspect-schema.md)")
	save := fs.String("save", "", "also write a snapshot of everything read to `FILE` (.tar.gz)")
	from := fs.String("from", "", "read a snapshot `FILE` instead of this host")
	ifaces, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := refuseEmptyOf(fs, "", "from", "save"); err != nil {
		return err
	}
	if *save != "" && *from != "" {
		return usageErrorf("--save and --from do not go together (a snapshot is re-read as it is)")
	}
	opts := inspect.Options{Ifaces: ifaces}
	var rec *hostfs.Recorder
	var snapFile *hostfs.Snapshot
	switch {
	case *from != "":
		snapFile, err = hostfs.OpenSnapshot(*from)
		if err != nil {
			return snapshotError(*from, err)
		}
		defer snapFile.Close()
		opts.FS = snapFile.FS
		if opts.Answers, err = inspect.ReplayAnswers(snapFile.Answers); err != nil {
			return fmt.Errorf("%s: %w", *from, err)
		}
	default:
		opts.FS = hostfs.Live()
		if *save != "" {
			// Fail on an unwritable path before reading anything.
			f, err := os.OpenFile(*save, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				return usageErrorf("--save %s: cannot write it: %v; give a path in a writable directory", *save, unwrapPathErr(err))
			}
			f.Close()
			rec = hostfs.NewRecorder()
			opts.FS.Record(rec)
		}
		opts.Answers = inspect.LiveAnswers(opts.FS)
	}
	snap, err := inspect.Collect(ctx, opts)
	if err != nil {
		if *save != "" {
			os.Remove(*save)
		}
		return unknownIface(err)
	}
	if snapFile != nil {
		snap.Source = inspect.Source{Kind: "snapshot", File: *from, AsRoot: opts.Answers.Euid == 0,
			Captured: snapFile.Meta.Created.UTC().Format(time.RFC3339)}
	}
	if rec != nil {
		if err := writeSnapshot(*save, rec, opts.Answers, snap, args); err != nil {
			return err
		}
	}
	if *asJSON {
		return writeJSON(env, snap)
	}
	if err := inspect.WriteText(env.Stdout, snap); err != nil {
		return err
	}
	if *save != "" {
		fmt.Fprintf(env.Stderr, "wirespeed: snapshot written to %s (read it anywhere with: wirespeed inspect --from %s)\n", *save, *save)
	}
	return nil
}

func writeSnapshot(file string, rec *hostfs.Recorder, a *inspect.Answers, snap *inspect.Snapshot, args []string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("cannot write snapshot: %w", err)
	}
	meta := hostfs.Meta{
		Created:   time.Now().UTC().Truncate(time.Second),
		Hostname:  snap.Host.Hostname,
		Kernel:    snap.Host.Kernel,
		Wirespeed: Version,
		Command:   "wirespeed inspect " + strings.Join(args, " "),
	}
	if err := hostfs.WriteSnapshot(f, rec, meta, a); err != nil {
		f.Close()
		os.Remove(file)
		return fmt.Errorf("writing snapshot %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(file)
		return fmt.Errorf("writing snapshot %s: %w", file, err)
	}
	return nil
}
