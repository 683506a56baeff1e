// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Reading doctor's input: live, from a snapshot file, or from a bench result.

func liveSnapshot(ctx context.Context, ifaces []string) (*inspect.Snapshot, error) {
	fsys := hostfs.Live()
	snap, err := inspect.Collect(ctx, inspect.Options{FS: fsys, Answers: inspect.LiveAnswers(fsys), Ifaces: ifaces})
	if err != nil {
		return nil, unknownIface(err)
	}
	return snap, nil
}

// loadSnapshot reads a snapshot file as 'inspect --from' does.
func loadSnapshot(ctx context.Context, file string, ifaces []string) (*inspect.Snapshot, error) {
	sf, err := hostfs.OpenSnapshot(file)
	if err != nil {
		return nil, snapshotError(file, err)
	}
	defer sf.Close()
	a, err := inspect.ReplayAnswers(sf.Answers)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	snap, err := inspect.Collect(ctx, inspect.Options{FS: sf.FS, Answers: a, Ifaces: ifaces})
	if errors.Is(err, inspect.ErrUnknownInterface) {
		return nil, unknownIface(err)
	}
	if err != nil {
		return nil, err
	}
	snap.Source = inspect.Source{Kind: "snapshot", File: file, AsRoot: a.Euid == 0,
		Captured: sf.Meta.Created.UTC().Format(time.RFC3339)}
	return snap, nil
}

// fromResult reads a bench result file (and the --from snapshot, when
// given) and lets doctor.FromResult build the Input from them.
func fromResult(ctx context.Context, file, from string, ifaces []string) (*doctor.Input, string, error) {
	res, err := bench.Load(file)
	if err != nil {
		return nil, "", err
	}
	var snap *inspect.Snapshot
	if from != "" {
		if snap, err = loadSnapshot(ctx, from, ifaces); err != nil {
			return nil, "", err
		}
	}
	in, desc, err := doctor.FromResult(res, file, snap, ifaces)
	if err != nil {
		return nil, "", unknownIface(err)
	}
	return in, desc, nil
}
