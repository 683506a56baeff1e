// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"archive/tar"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/testdata/snapshots/snaptext"
)

// fixtureBuild is the command that makes a fixture's .tar.gz from its text.
const fixtureBuild = "go run ./testdata/snapshots/fixtures"

// TestFixturesBuiltFromText: every snapshot fixture is a text a reviewer
// reads (testdata/snapshots/NAME.txt) and the .tar.gz built from it, which
// the commands and tests read: each .tar.gz has its .txt and each .txt its
// .tar.gz, the .tar.gz's tar stream is byte for byte the one the text
// builds (entries, order, modes, times, owners, symlinks), and the text is
// in the form the tool writes, so a fixture's change is a diff of its text.
func TestFixturesBuiltFromText(t *testing.T) {
	tgz, _ := filepath.Glob(filepath.Join(goldenFixtures, "*.tar.gz"))
	txt, _ := filepath.Glob(filepath.Join(goldenFixtures, "*.txt"))
	if len(tgz) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range txt {
		if _, err := os.Stat(strings.TrimSuffix(f, ".txt") + ".tar.gz"); err != nil {
			t.Errorf("%s has no .tar.gz: %s builds it", f, fixtureBuild)
		}
	}
	for _, f := range tgz {
		name := strings.TrimSuffix(f, ".tar.gz")
		text, err := os.ReadFile(name + ".txt")
		if err != nil {
			t.Errorf("%s has no text form %s.txt: %s -import %s %s writes it", f, name, fixtureBuild, f, filepath.Base(name))
			continue
		}
		entries, err := snaptext.Decode(text)
		if err != nil {
			t.Errorf("%s.txt: %v", name, err)
			continue
		}
		want, err := snaptext.Tar(entries)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := snaptext.Gunzip(b)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what %s.txt builds (%d and %d tar bytes): run %s", f, name, len(got), len(want), fixtureBuild)
		}
		if canon, err := snaptext.Encode(entries); err != nil || !bytes.Equal(canon, text) {
			t.Errorf("%s.txt is not in the form the tool writes (%v): %s -import %s %s rewrites it", name, err, fixtureBuild, f, filepath.Base(name))
		}
	}
}

// TestFixtureScriptsWriteTheText: the hand-built fixtures' scripts
// (mkfixtures.py, mkdevices.py) write exactly the committed text, so a
// fixture changed by hand in its .txt and not in its script fails here
// rather than being lost the next time the script runs.
func TestFixtureScriptsWriteTheText(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	out := t.TempDir()
	for _, script := range []string{"mkfixtures.py", "mkdevices.py", "mkplatforms.py"} {
		cmd := exec.Command(py, script)
		cmd.Dir = goldenFixtures
		cmd.Env = append(os.Environ(), "WIRESPEED_FIXTURES_OUT="+out, "PYTHONDONTWRITEBYTECODE=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, b)
		}
	}
	written, _ := filepath.Glob(filepath.Join(out, "*.txt"))
	if len(written) < 10 {
		t.Fatalf("the scripts wrote %d fixtures", len(written))
	}
	for _, f := range written {
		got, _ := os.ReadFile(f)
		want, err := os.ReadFile(filepath.Join(goldenFixtures, filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what its script writes (%v): change the script and run it, not the text alone", filepath.Base(f), err)
		}
	}
}

// TestFixtureTextForm: what a snapshot tar can hold survives the text form
// both ways - symlinks (relative, with a space), modes other than the
// usual, an entry's own time, a last line without newline, lines with
// trailing blanks or control characters, empty files - and what it cannot
// carry (an owner) is refused rather than lost.
func TestFixtureTextForm(t *testing.T) {
	entries := []snaptext.Entry{
		{Type: tar.TypeReg, Name: "meta.json", Mode: 0o644, ModTime: 1700000000, Data: []byte("{\n  \"a\": 1\n}")},
		{Type: tar.TypeDir, Name: "root/sys/", Mode: 0o755, ModTime: 1700000000},
		{Type: tar.TypeDir, Name: "root/sys/private/", Mode: 0o700, ModTime: 1700000000},
		{Type: tar.TypeSymlink, Name: "root/sys/class/net/eth0", Linkname: "../../devices/my dev/net/eth0", Mode: 0o777, ModTime: 1700000000},
		{Type: tar.TypeReg, Name: "root/proc/interrupts", Mode: 0o444, ModTime: 1700000001,
			Data: []byte("           CPU0       CPU1       \n 24:  1  0  IO-APIC\n\n\tx\x00y\r\n| not a marker\nq \"nor this\"\n")},
		{Type: tar.TypeReg, Name: "root/sys/empty", Mode: 0o644, ModTime: 1700000000},
		{Type: tar.TypeReg, Name: "root/sys/newline", Mode: 0o644, ModTime: 1700000000, Data: []byte("\n")},
		{Type: tar.TypeReg, Name: "root/sys/with space", Mode: 0o600, ModTime: 1700000000, Data: []byte("\xff\xfe")},
	}
	text, err := snaptext.Encode(entries)
	if err != nil {
		t.Fatal(err)
	}
	back, err := snaptext.Decode(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for i := range back {
		if len(back[i].Data) == 0 {
			back[i].Data = nil
		}
	}
	if !reflect.DeepEqual(back, entries) {
		t.Errorf("text form read back differs:\n%s\ngot  %+v\nwant %+v", text, back, entries)
	}
	for _, want := range []string{"link root/sys/class/net/eth0 -> \"../../devices/my dev/net/eth0\"", "dir root/sys/private/ mode=0700",
		"file root/proc/interrupts mode=0444 mtime=1700000001", `q "           CPU0       CPU1       "`, "|  24:  1  0  IO-APIC\n|\n",
		"file meta.json noeol", "file \"root/sys/with space\" noeol mode=0600"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("want %q in\n%s", want, text)
		}
	}
	raw, err := snaptext.Tar(entries)
	if err != nil {
		t.Fatal(err)
	}
	read, err := snaptext.ReadTar(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := snaptext.Encode(read); !bytes.Equal(again, text) {
		t.Errorf("tar -> text differs from the text it was built from")
	}
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "meta.json", Mode: 0o644, Uid: 1000})
	tw.Close()
	if _, err := snaptext.ReadTar(&b); err == nil || !strings.Contains(err.Error(), "owner") {
		t.Errorf("an owner the text form cannot carry: %v", err)
	}
	for _, bad := range []string{"file x", "wirespeed-snapshot-text 1\nfile x", "wirespeed-snapshot-text 1\nmtime 1\n| x",
		"wirespeed-snapshot-text 1\nmtime 1\nfile x bogus", "wirespeed-snapshot-text 1\nmtime 1\nlink x y"} {
		if _, err := snaptext.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
}
