// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"math/rand"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// Faults is the hostile mode's behaviour of the bus side, repeatable from
// its seed: stalled bulk IN transfers, slow and bursty completions, bulk
// OUT transfers the device is slow to take, unplugs at any moment. What a model sends malformed is the model's
// (Mutator).
type Faults struct {
	Seed int64 `json:"seed"`
	// StallPerMille of bulk IN answers are a stall (the host clears the
	// halt and goes on).
	StallPerMille int `json:"stall_per_mille"`
	// SlowPerMille of bulk IN answers are held up to MaxDelay first.
	SlowPerMille int           `json:"slow_per_mille"`
	MaxDelay     time.Duration `json:"max_delay_ns"`
	// SlowOutPerMille of bulk OUT transfers are held up to MaxDelay
	// before the device takes them and answers (the ones behind wait:
	// the endpoint's transfers complete in order), while control
	// requests and the other endpoints go on being answered. A driver
	// then has TX URBs in flight whenever it stops or resets.
	SlowOutPerMille int `json:"slow_out_per_mille,omitempty"`
	// ReplugEvery unplugs and re-plugs the device about this often
	// (jittered), whatever is in flight.
	ReplugEvery time.Duration `json:"replug_every_ns"`
	// BadPerMille of the aggregates a model builds are malformed.
	BadPerMille int `json:"bad_per_mille"`

	mu     sync.Mutex
	rng    *rand.Rand
	outRng *rand.Rand // bulk OUT's own draws: the same seed holds the same transfers whatever IN does
}

func (f *Faults) rand() *rand.Rand {
	if f.rng == nil {
		f.rng = rand.New(rand.NewSource(f.Seed))
	}
	return f.rng
}

// intn draws from the seeded source.
func (f *Faults) intn(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rand().Intn(n)
}

// jitter is d give or take half of it.
func (f *Faults) jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d/2 + time.Duration(f.intn(int(d)))
}

// onIn decides one bulk IN answer's fate: its status and a delay.
func (f *Faults) onIn() (uint8, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.StallPerMille > 0 && f.rand().Intn(1000) < f.StallPerMille {
		return usbredir.StatusStall, 0
	}
	if f.SlowPerMille > 0 && f.MaxDelay > 0 && f.rand().Intn(1000) < f.SlowPerMille {
		return usbredir.StatusSuccess, time.Duration(f.rand().Int63n(int64(f.MaxDelay)))
	}
	return usbredir.StatusSuccess, 0
}

// onOut is how long the next bulk OUT transfer is held before the device
// takes it (0: not held).
func (f *Faults) onOut() time.Duration {
	if f == nil || f.SlowOutPerMille <= 0 || f.MaxDelay <= 0 {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.outRng == nil {
		f.outRng = rand.New(rand.NewSource(f.Seed ^ 0x6f7574)) // "out"
	}
	if f.outRng.Intn(1000) >= f.SlowOutPerMille {
		return 0
	}
	return 1 + time.Duration(f.outRng.Int63n(int64(f.MaxDelay)))
}

// bad says whether the next aggregate is to be malformed, and which of
// n kinds.
func (f *Faults) bad(n int) (int, bool) {
	if f == nil || f.BadPerMille <= 0 || f.intn(1000) >= f.BadPerMille {
		return 0, false
	}
	return f.intn(n), true
}
