// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The page in a real browser: Debian's chromium, headless, renders the
// report of the real fixture to a PNG, which must not be blank and must
// show the charts - their colours as solid areas: the variants' lines and
// bars, the CPU shares' stacks, the napi bar.
func TestChromiumRendersReport(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium: 'make setup' installs Debian's chromium for this test")
	}
	rep, err := Build([]Input{{Name: "lab.json", R: loadFixture(t)}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// --no-sandbox: chromium refuses to run as root with its sandbox.
	// No network is reachable from the page: it has nothing to fetch.
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,7200",
		"--screenshot="+shot, "file://"+page)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("WIRESPEED_KEEP_SCREENSHOT"); keep != "" {
		b, _ := os.ReadFile(shot)
		os.WriteFile(keep, b, 0o644)
	}
	counts, nonWhite, total := colourCounts(img)
	if frac := float64(nonWhite) / float64(total); frac < 0.03 {
		t.Errorf("page looks blank: %.1f%% of pixels not white", 100*frac)
	}
	want := map[string]color.RGBA{
		"variant nogro (lines, NET_RX bars)":   SeriesColors[0],
		"variant gro (lines, bars, GRO ratio)": SeriesColors[1],
		"variant threaded (lines, napi bar)":   SeriesColors[2],
		"CPU usr share":                        ColorUser,
		"CPU sys share":                        ColorSys,
		"CPU softirq share":                    ColorSoftirq,
	}
	for what, c := range want {
		t.Logf("%s: %d pixels", what, counts[c])
		// The HTML legends' swatches alone give some hundred pixels of
		// each colour; a drawn chart gives ten thousands.
		if n := counts[c]; n < 3000 {
			t.Errorf("%s: %d pixels of %v in the screenshot, want a visible chart", what, n, c)
		}
	}
}

func colourCounts(img image.Image) (map[color.RGBA]int, int, int) {
	counts := map[color.RGBA]int{}
	nonWhite, total := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			c := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bb >> 8), 0xff}
			counts[c]++
			total++
			if c != (color.RGBA{0xff, 0xff, 0xff, 0xff}) {
				nonWhite++
			}
		}
	}
	return counts, nonWhite, total
}

// flent's own plotting reads the export: 'flent -i FILE -p totals' must
// draw it (it fails on a file it cannot load or a plot with no data).
func TestFlentPlotsExport(t *testing.T) {
	fl, err := exec.LookPath("flent")
	if err != nil {
		t.Skip("no flent: 'make setup' installs Debian's flent (and python3-matplotlib) for this test")
	}
	b, _, err := Flent(loadFixture(t), "gro", 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "gro.flent.gz")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, plot := range []string{"totals", "upload", "ping_cdf"} {
		outPNG := filepath.Join(dir, plot+".png")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, fl, "-i", in, "-p", plot, "-o", outPNG)
		cmd.Env = append(os.Environ(), "HOME="+dir, "MPLCONFIGDIR="+dir)
		out, err := cmd.CombinedOutput()
		cancel()
		if strings.Contains(string(out), "matplotlib is missing") {
			t.Skip("flent without python3-matplotlib cannot plot: 'make setup' installs it")
		}
		if err != nil || strings.Contains(string(out), "ERROR") {
			t.Fatalf("flent -p %s: %v\n%s", plot, err, out)
		}
		f, err := os.Open(outPNG)
		if err != nil {
			t.Fatalf("flent -p %s wrote no PNG: %v\n%s", plot, err, out)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("flent -p %s: %v", plot, err)
		}
		counts, _, _ := colourCounts(img)
		if len(counts) < 20 {
			t.Errorf("flent -p %s drew a near-empty picture (%d colours)", plot, len(counts))
		}
	}
}
