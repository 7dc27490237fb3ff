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
// is noted, and a full one counts what it dropped.
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
	at := map[string]int{} // the first event of each kind
	for i, e := range ev {
		if _, seen := at[e.What]; !seen {
			at[e.What] = i
		}
		if e.Dur < 0 || e.At < 0 {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	for i, w := range want {
		j, ok := at[w]
		if !ok {
			t.Fatalf("no %q event in %+v", w, ev)
		}
		if i > 0 && ev[j].At < ev[at[want[i-1]]].At {
			t.Fatalf("%q (%+v) began before %q (%+v)", w, ev[j], want[i-1], ev[at[want[i-1]]])
		}
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
