// SPDX-License-Identifier: Apache-2.0

package kit

import "testing"

func TestTable(t *testing.T) {
	got := Table([]string{"pair", "ratio", ""}, [][]string{{"1", "1.05", ""}, {"median", "", "of 2"}})
	want := "| pair | ratio | |\n|---|---|---|\n| 1 | 1.05 | |\n| median | | of 2 |\n"
	if got != want {
		t.Errorf("Table =\n%s\nwant\n%s", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("a row of the wrong width did not panic")
		}
	}()
	Table([]string{"a", "b"}, [][]string{{"1"}})
}
