package usbnetrxcost

import (
	"os"
	"testing"
)

func TestExploreDir(t *testing.T) {
	d := os.Getenv("PDIR")
	if d == "" {
		t.Skip()
	}
	s, err := profileRunsTable(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + s)
}
