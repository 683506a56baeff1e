// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

// What a scrape costs on this host, part by part (docs/results.md,
// "Exporter"): go test -run ^$ -bench . -benchtime 200x ./internal/exporter

// BenchmarkScrape: a scrape between full snapshots (cache.go).
func BenchmarkScrape(b *testing.B) { benchScrape(b, 0) }

// BenchmarkScrapeFull: a scrape that takes a full snapshot, as each one does
// with --refresh 0 and one in every Refresh/interval does by default.
func BenchmarkScrapeFull(b *testing.B) { benchScrape(b, -1) }

func benchScrape(b *testing.B, refresh time.Duration) {
	e := New(context.Background(), Options{Refresh: refresh})
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInspectCollect(b *testing.B) {
	f := hostfs.Live()
	probes := map[string]string{}
	for b.Loop() {
		a := inspect.LiveAnswers(f)
		for k, v := range probes {
			a.AffinityProbes[k] = v
		}
		if _, err := inspect.Collect(context.Background(), inspect.Options{FS: f, Answers: a}); err != nil {
			b.Fatal(err)
		}
		probes = a.AffinityProbes
	}
}

// BenchmarkProcfsReaders is the lighter alternative: only the procfs
// files, no sysfs walk and no netlink.
func BenchmarkProcfsReaders(b *testing.B) {
	f := hostfs.Live()
	for b.Loop() {
		for _, p := range []string{"/proc/net/softnet_stat", "/proc/softirqs", "/proc/interrupts"} {
			raw, err := f.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			switch p {
			case "/proc/net/softnet_stat":
				_, err = procfs.ParseSoftnetStat(raw)
			case "/proc/softirqs":
				_, err = procfs.ParseSoftirqs(raw)
			default:
				_, err = procfs.ParseInterrupts(raw)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDoctor: doctor's rules over this host's snapshot, which a scrape
// runs when the snapshot or the observation is new.
func BenchmarkDoctor(b *testing.B) {
	e := New(context.Background(), Options{})
	snap, err := e.colls.inspect.inspect()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := diagnose(&doctor.Input{Snap: snap}); err != nil {
			b.Fatal(err)
		}
	}
}
