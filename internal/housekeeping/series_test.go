// SPDX-License-Identifier: Apache-2.0

package housekeeping

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The usbnet series of each family is a list of patch files whose names
// and Subject lines carry their place in it. A reorder (or a patch added
// or dropped) must renumber both, and the fixes of races the stock driver
// has too must stand before the NAPI patch, which widens one of their
// windows: a prefix with NAPI and without them lost the carrier at the
// start of most boots on 6.1 (docs/results.md, "The series reordered").

var patchSubject = regexp.MustCompile(`(?m)^Subject: \[PATCH (\d+)/(\d+)\] (.*)$`)

// seriesSubjects reads dir's NNNN-*.patch files, checks that file N's
// Subject says [PATCH N/TOTAL] with TOTAL the number of patches, and
// returns the subjects in order (the cover letter, 0000, left out).
func seriesSubjects(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]-*.patch"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var subjects []string
	total := len(files) - 1
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		m := patchSubject.FindStringSubmatch(string(b))
		if m == nil {
			return nil, fmt.Errorf("%s: no [PATCH N/M] Subject line", f)
		}
		if want := fmt.Sprintf("%d/%d", i, total); m[1]+"/"+m[2] != want {
			return nil, fmt.Errorf("%s: Subject says [PATCH %s/%s], its place in %s is %s", filepath.Base(f), m[1], m[2], dir, want)
		}
		if !strings.HasPrefix(filepath.Base(f), fmt.Sprintf("%04d-", i)) {
			return nil, fmt.Errorf("%s: not numbered %04d", f, i)
		}
		if i > 0 {
			subjects = append(subjects, m[3])
		}
	}
	return subjects, nil
}

// fixesBeforeNAPI says which "do not lose" fix comes after the NAPI patch.
func fixesBeforeNAPI(subjects []string) error {
	napi := -1
	for i, s := range subjects {
		if strings.Contains(s, "NAPI poll") {
			napi = i
		}
	}
	if napi < 0 {
		return fmt.Errorf("no NAPI patch among %q", subjects)
	}
	for i, s := range subjects {
		if strings.Contains(s, "do not lose") && i > napi {
			return fmt.Errorf("patch %d (%s) comes after the NAPI patch (%d)", i+1, s, napi+1)
		}
	}
	return nil
}

func TestUsbnetSeriesOrder(t *testing.T) {
	root := filepath.Join(moduleRoot(t), "kernel", "usbnet", "patches")
	fams, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fams {
		if !f.IsDir() {
			continue
		}
		subjects, err := seriesSubjects(filepath.Join(root, f.Name()))
		if err != nil {
			t.Error(err)
			continue
		}
		if err := fixesBeforeNAPI(subjects); err != nil {
			t.Errorf("patches/%s: %v", f.Name(), err)
		}
		n++
	}
	if n < 4 {
		t.Fatalf("read %d families under %s, want 6.1, 6.12, 6.18 and 7.x", n, root)
	}
}

// The check itself: the old order (the fixes after the feature) fails.
func TestFixesBeforeNAPIRefusesTheOldOrder(t *testing.T) {
	old := []string{"usbnet: release TX URBs in tx_complete()", "usbnet: run the bottom half as a NAPI poll",
		"usbnet: deliver received packets through GRO", "usbnet: do not lose a link change reported before open completes"}
	if err := fixesBeforeNAPI(old); err == nil || !strings.Contains(err.Error(), "patch 4") {
		t.Fatalf("the old order: err = %v", err)
	}
	if err := fixesBeforeNAPI(append(old[3:], old[:3]...)); err != nil {
		t.Fatalf("fixes first: %v", err)
	}
}
