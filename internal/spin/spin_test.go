package spin

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestCrowded counts pollers in and out, twice each way, against the rule
// (half of min(GOMAXPROCS, processors) or more) at GOMAXPROCS 2 and 8.
func TestCrowded(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, mp := range []int{2, 8} {
		runtime.GOMAXPROCS(mp)
		n := min(mp, runtime.NumCPU())
		ps := make([]Poller, 6)
		for i := range ps {
			ps[i].Start()
			ps[i].Start() // counted once
			if got, want := Crowded(), 2*(i+1) >= n; got != want {
				t.Fatalf("GOMAXPROCS %d (%d processors), %d pollers: Crowded %v, want %v", mp, n, i+1, got, want)
			}
		}
		for i := range ps {
			ps[i].Stop()
			ps[i].Stop() // taken out once
			if got, want := Crowded(), 2*(len(ps)-i-1) >= n; got != want {
				t.Fatalf("GOMAXPROCS %d, %d pollers left: Crowded %v, want %v", mp, len(ps)-i-1, got, want)
			}
		}
		if polling.Load() != 0 {
			t.Fatalf("%d pollers counted after every one stopped", polling.Load())
		}
	}
}

// TestIdlePeriod: a poller that does not crowd the processors yields once
// per Period of idle looks, counted from its first idle look after Start.
func TestIdlePeriod(t *testing.T) {
	var p Poller
	p.Start()
	defer p.Stop()
	procs.Store(1 << 20) // far from crowded, whatever the machine
	t0 := time.Unix(1000, 0)
	p.Idle(t0)
	if !p.last.Equal(t0) {
		t.Fatalf("first idle look: last %v, want %v", p.last, t0)
	}
	p.Idle(t0.Add(Period - 1))
	if !p.last.Equal(t0) {
		t.Fatalf("yielded before Period: last %v", p.last)
	}
	p.Idle(t0.Add(Period))
	if !p.last.Equal(t0.Add(Period)) {
		t.Fatalf("no yield at Period: last %v, want %v", p.last, t0.Add(Period))
	}
	p.Stop()
	p.Start()
	if !p.last.IsZero() {
		t.Fatal("Start kept the last yield of the previous spell")
	}
}

// TestConcurrent starts and stops pollers from many goroutines (the race
// detector checks the counters) and finds none counted after.
func TestConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := Poller{Every: 4}
			for i := 0; i < 1000; i++ {
				p.Start()
				p.Idle(time.Now())
				p.Stop()
			}
		}()
	}
	wg.Wait()
	if polling.Load() != 0 {
		t.Fatalf("%d pollers counted after every one stopped", polling.Load())
	}
}
