package tune

import (
	"strings"
	"testing"
)

// TestBenchArgv: every measurement carries -P and the user's bench flags
// after tune's own, and CheckBenchArgs lets a flag's value through.
func TestBenchArgv(t *testing.T) {
	extra := []string{"--port", "5300", "--probe-interval=20ms"}
	if err := CheckBenchArgs(extra); err != nil {
		t.Fatalf("valid --bench-args refused: %v", err)
	}
	b := Bench{Prefix: []string{"ip", "netns", "exec", "x"}, Peer: "198.18.0.2", Duration: "3s", Direction: "receive", Streams: 2, Extra: extra}
	got := strings.Join(b.argv("/ws"), " ")
	want := "ip netns exec x /ws bench --peer 198.18.0.2 -t 3s --omit 1s --idle 0s --observe off --no-inspect --out - --json --direction receive -P 2 --port 5300 --probe-interval=20ms"
	if got != want {
		t.Errorf("argv\n got %s\nwant %s", got, want)
	}
}
