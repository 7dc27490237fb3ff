package emu

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// A timeline follows a WRITE to its CQE: the requester's transmit round,
// the responder's request and ACK, the requester's response, begun in that
// order (an event is noted when it ends: the request inside the transmit
// round; the doorbell may be noted after the CQE, as a DBR in host memory
// lets the engine transmit before it takes the doorbell); with no timeline running nothing
// is noted, and a full one counts what it dropped. The warm-up WRITE's
// "responses" may land in the timeline too: the engine notes the responses
// it applied after the CQE it wrote, which the test may have polled before
// the timeline started; so each stage is looked for at or after the one
// before it.
func TestTimeline(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	write := func() {
		t.Helper()
		idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 64)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
	}
	write()
	if tl := StopTimeline(); tl.Events != nil || tl.Dropped != 0 {
		t.Fatalf("no timeline ran: %d events, %d dropped", len(tl.Events), tl.Dropped)
	}

	StartTimeline(1024)
	write()
	tl := StopTimeline()
	ev, dropped := tl.Events, tl.Dropped
	if dropped != 0 {
		t.Fatalf("%d events dropped of 1024", dropped)
	}
	want := []string{"transmit", "request", "ack", "responses"}
	for i, e := range ev {
		if e.Dur < 0 || e.At < 0 {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	at := map[string]int{} // each stage's first event at or after the stage before
	for i, w := range want {
		j := -1
		for k, e := range ev {
			if e.What == w && (i == 0 || e.At >= ev[at[want[i-1]]].At) && (j < 0 || e.At < ev[j].At) {
				j = k
			}
		}
		if j < 0 {
			if i == 0 {
				t.Fatalf("no %q event in %+v", w, ev)
			}
			t.Fatalf("no %q event began at or after %q (%+v) in %+v", w, want[i-1], ev[at[want[i-1]]], ev)
		}
		at[w] = j
	}
	if e := ev[at["transmit"]]; e.QPN != x.qpn || e.B-e.A != 1 {
		t.Fatalf("transmit event %+v: want QP %#x, one WQE", e, x.qpn)
	}
	if e := ev[at["request"]]; e.QPN != y.qpn || e.B != 64 {
		t.Fatalf("request event %+v: want QP %#x, 64 bytes", e, y.qpn)
	}
	var buf bytes.Buffer
	if err := tl.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != len(ev)+2 {
		t.Fatalf("%d lines for %d events", lines, len(ev))
	}

	StartTimeline(2)
	write()
	if tl := StopTimeline(); len(tl.Events) != 2 || tl.Dropped == 0 {
		t.Fatalf("a timeline of 2: %d events kept, %d dropped", len(tl.Events), tl.Dropped)
	}
}
