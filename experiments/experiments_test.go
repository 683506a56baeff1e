// SPDX-License-Identifier: Apache-2.0

package experiments

import (
	"strings"
	"testing"
)

func TestParseAndReplace(t *testing.T) {
	doc := "# R\n\n<!-- table a/one -->\n| x |\n|---|\n| 1 |\n<!-- /table -->\n\n| loose |\n```\n| in a fence |\n```\n"
	blocks, unmarked, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 || blocks[0].ID != "a/one" || blocks[0].Text != "| x |\n|---|\n| 1 |\n" || blocks[0].Line != 3 {
		t.Fatalf("blocks = %+v", blocks)
	}
	if len(unmarked) != 1 || unmarked[0] != 9 {
		t.Fatalf("unmarked = %v, want [9]", unmarked)
	}
	out, err := Replace(doc, map[string]string{"a/one": "| y |\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "<!-- table a/one -->\n| y |\n<!-- /table -->") || strings.Contains(out, "| 1 |") {
		t.Fatalf("replace: %q", out)
	}
	if _, err := Replace(doc, nil); err == nil {
		t.Fatal("replace with no computed table: want an error")
	}
	for _, bad := range []string{"<!-- table a/x -->\n| 1 |\n", "<!-- /table -->\n", "<!-- table a/x -->\n<!-- table a/y -->\n"} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): want an error", bad)
		}
	}
}
