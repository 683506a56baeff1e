// SPDX-License-Identifier: Apache-2.0

package testfiles

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

func TestReadGunzipsByName(t *testing.T) {
	dir := t.TempDir()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("inside"))
	zw.Close()
	for name, b := range map[string][]byte{"a.json.gz": z.Bytes(), "b.json": []byte("plain"), "c.tgz": z.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := Read(t, filepath.Join(dir, "a.json.gz")); string(got) != "inside" {
		t.Errorf("a.json.gz: %q", got)
	}
	if got := Read(t, filepath.Join(dir, "b.json")); string(got) != "plain" {
		t.Errorf("b.json: %q", got)
	}
	if got := Read(t, filepath.Join(dir, "c.tgz")); !bytes.Equal(got, z.Bytes()) {
		t.Errorf("c.tgz (not .gz): %q, want it as it is", got)
	}
	if _, err := Decode("x.gz", []byte("not gzip")); err == nil {
		t.Error("Decode took bytes that are not gzip")
	}
}
