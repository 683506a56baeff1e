// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"fmt"
	"path/filepath"
)

// A Swept binary is one sweep of bad inputs (bad-inputs.sh,
// hostile-sweep.sh) over one build: the label says which commit it was
// built from, File is the sweep's OUT.json under the experiment's data/.
type Swept struct{ Label, File string }

// SweepRows reads each binary's sweep record (dir is the experiment's
// directory) into a T, refuses a record that holds fewer or more entries
// than it says it tried (count returns both; what names the entries in
// the message), and returns row's cells for each, in order.
func SweepRows[T any](dir string, binaries []Swept, what string, count func(*T) (recorded, tried int),
	row func(b Swept, r *T) ([]string, error)) ([][]string, error) {
	var rows [][]string
	for _, b := range binaries {
		r := new(T)
		if err := ReadJSON(filepath.Join(dir, "data", b.File), r); err != nil {
			return nil, err
		}
		if rec, tried := count(r); rec != tried {
			return nil, fmt.Errorf("data/%s: %d %s recorded, %d tried", b.File, rec, what, tried)
		}
		cells, err := row(b, r)
		if err != nil {
			return nil, err
		}
		rows = append(rows, cells)
	}
	return rows, nil
}
