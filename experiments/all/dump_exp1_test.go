package all

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/wirespeed/wirespeed/experiments"
)

func TestDumpExp1(t *testing.T) {
	if os.Getenv("DUMP") == "" {
		t.Skip()
	}
	c, err := experiments.Compute(experiments.Root())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range c {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Printf("== %s\n%s", id, c[id])
	}
}
