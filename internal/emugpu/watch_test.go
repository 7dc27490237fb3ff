package emugpu

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// The send-queue watch on a real GPU: block 1 of the copier kernel pushes new WQE
// slots (across the ring's wrap) and the guess's bytes, as they were after
// the counter moved; a closed watch's slot is given out again; a watch
// whose ring was freed is dropped without touching it (the context lives
// on); a context synchronization still returns; the ninth watch is refused.
func TestGPUWatch(t *testing.T) {
	skipNoWatch(t)
	c, a, r := gpuSetup(t)

	const (
		dbrOff  = 4
		ringOff = 4096
		logSize = 4
		size    = 1 << logSize
		payOff  = 64 << 10
	)
	put := func(off int, b []byte) { t.Helper(); devPut(t, a, r, off, b) }
	wqe := func(idx uint16) []byte {
		b := make([]byte, 64)
		for i := range b {
			b[i] = byte(int(idx)*3 + i)
		}
		return b
	}
	// post writes WQEs [from, to) into their slots, then (another batch,
	// as software fences between them) the counter.
	post := func(from, to uint16) {
		t.Helper()
		for i := from; i != to; i++ {
			put(ringOff+64*(int(i)%size), wqe(i))
		}
		var be [4]byte
		binary.BigEndian.PutUint32(be[:], uint32(to))
		put(dbrOff, be[:])
	}
	waitPushed := func(w emu.SQWatch, want uint16) { t.Helper(); waitPush(t, a, r, w, want) }

	post(0, 0) // counter 0, and a running instance
	w, err := a.WatchSQ(emu.SQWatchSpec{DBR: r, DBROff: dbrOff, Ring: r, RingOff: ringOff, LogSize: logSize})
	require.NoError(t, err)
	dv := w.(*sqWatch).d
	// settle waits until the GPU has loaded the newest table.
	settle := func() {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for k := 0; ; k++ {
			dv.mu.Lock()
			if dv.wDirty.Load() {
				dv.publish()
			}
			done := !dv.wDirty.Load() && dv.cp.load(ctlWatchAck) == dv.wGen
			dv.mu.Unlock()
			if done {
				return
			}
			require.True(t, time.Now().Before(deadline), "the watch table did not reach the GPU")
			if k%200 == 199 {
				put(512<<10, []byte{byte(k)})
			}
			time.Sleep(10 * time.Microsecond)
		}
	}
	mirror := make([]byte, 64*size)
	check := func(from, to uint16) {
		t.Helper()
		w.ReadRing(from, to, mirror)
		for i := from; i != to; i++ {
			s := int(i) % size
			require.Equal(t, wqe(i), mirror[64*s:64*(s+1)], "slot %d (WQE %d)", s, i)
		}
	}
	post(0, 3)
	waitPushed(w, 3)
	check(0, 3)

	// The guess: bytes as they were after the counter moved.
	w.SetGuess([]emu.GuessRead{{Src: r, Off: payOff, N: 8}, {Src: r, Off: payOff + 100, N: 3}})
	g := make([]byte, watchGuessMax)
	settle() // pushes from now on carry the guess
	if _, ok := w.Guess(g); ok {
		t.Fatal("a guess before any push made after SetGuess")
	}
	for round, msg := range []string{"abcdefghXYZ", "12345678pqr", "zyxwvutsABC"} {
		put(payOff, []byte(msg[:8]))
		put(payOff+100, []byte(msg[8:]))
		from := uint16(3 + round)
		post(from, from+1)
		waitPushed(w, from+1)
		check(from, from+1)
		n, ok := w.Guess(g)
		require.True(t, ok, "round %d: no guess pushed", round)
		assert.Equal(t, uint32(from+1), n)
		assert.Equal(t, msg, string(g[:11]), "round %d", round)
	}

	// Several WQEs across the wrap, then more than a ring's worth of
	// counter change (as after an instance restart): the whole ring.
	post(6, 6+14)
	waitPushed(w, 20)
	check(6, 20)

	// A context synchronization returns although block 1 keeps pushing.
	start := time.Now()
	require.NoError(t, c.Synchronize())
	assert.Less(t, time.Since(start), 100*time.Millisecond)

	// After the instance ended, the next one pushes again.
	time.Sleep(20 * time.Millisecond)
	_, live := w.Latest()
	assert.False(t, live, "no copier instance runs 20 ms after the last batch")
	post(20, 22)
	waitPushed(w, 22)
	check(20, 22)

	// Closed: not live; the slot is given to the next watch.
	w.Close()
	w.Close()
	_, live = w.Latest()
	assert.False(t, live)
	put(512<<10, []byte{1})
	settle() // the table without it reached the GPU: its slot is free
	var ws []emu.SQWatch
	for i := 0; i < maxWatch; i++ {
		x, err := a.WatchSQ(emu.SQWatchSpec{DBR: r, DBROff: dbrOff, Ring: r, RingOff: ringOff, LogSize: logSize})
		require.NoError(t, err, "watch %d", i)
		ws = append(ws, x)
	}
	_, err = a.WatchSQ(emu.SQWatchSpec{DBR: r, DBROff: dbrOff, Ring: r, RingOff: ringOff, LogSize: logSize})
	assert.ErrorIs(t, err, errNoWatch, "a ninth watch")
	post(22, 23)
	waitPushed(ws[0], 23)
	waitPushed(ws[maxWatch-1], 23)
	for _, x := range ws {
		x.Close()
	}
	_, err = a.WatchSQ(emu.SQWatchSpec{DBR: r, DBROff: dbrOff, Ring: r, RingOff: 1 << 19, LogSize: watchMaxLog + 1})
	assert.ErrorIs(t, err, errNoWatch, "a ring too large")

	// A ring freed under a watch: the next instance drops the entry
	// instead of loading from freed memory, and the context lives on.
	q, err := c.MemAlloc(64 << 10)
	require.NoError(t, err)
	rq, ok := a.Claim(uintptr(q), 64<<10)
	require.True(t, ok)
	wf, err := a.WatchSQ(emu.SQWatchSpec{DBR: rq, DBROff: dbrOff, Ring: rq, RingOff: ringOff, LogSize: logSize})
	require.NoError(t, err)
	require.NoError(t, c.MemFree(q))
	for i := 0; i < 50; i++ {
		put(512<<10, []byte{byte(i)})
		time.Sleep(time.Millisecond)
		if _, live := wf.Latest(); live {
			t.Fatal("a watch over freed memory is live")
		}
	}
	wf.Close()
	got := make([]byte, 3)
	require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, Host: []byte("ok!")}, {Kind: emu.CopyToHost, Src: r, Host: got}}))
	assert.Equal(t, "ok!", string(got))
	require.NoError(t, c.Synchronize())
}

// BenchmarkGPUWatchPush times the watch's push of a burst: software writes
// the WQEs of a burst into a ring in device memory (once, before the
// timer) and then, per iteration, moves the send counter by the burst
// (one copier batch); the iteration ends when the watch's push of the new
// counter is on the host. burst1 is the push of one WQE, so the difference
// is what the ring's bytes cost (put_bw's burst is 512 64-byte WQEs, 32
// KiB). us/push is the time from the counter's batch to the push seen.
func BenchmarkGPUWatchPush(b *testing.B) {
	skipNoWatch(b)
	_, a, r := gpuSetup(b)
	const (
		dbrOff  = 4
		ringOff = 4096
		logSize = 10
	)
	ring := make([]byte, 64<<logSize)
	for i := range ring {
		ring[i] = byte(i * 7)
	}
	require.NoError(b, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, DstOff: ringOff, Host: ring}}))
	var be [4]byte
	require.NoError(b, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, DstOff: dbrOff, Host: be[:]}}))
	w, err := a.WatchSQ(emu.SQWatchSpec{DBR: r, DBROff: dbrOff, Ring: r, RingOff: ringOff, LogSize: logSize})
	require.NoError(b, err)
	defer w.Close()
	counter, nudges := uint16(0), 0
	push := func(b *testing.B, n uint16) time.Duration {
		counter += n
		binary.BigEndian.PutUint32(be[:], uint32(counter))
		start := time.Now()
		if err := a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, DstOff: dbrOff, Host: be[:]}}); err != nil {
			b.Fatal(err)
		}
		deadline, nudge := start.Add(2*time.Second), start.Add(200*time.Microsecond)
		for {
			if got, live := w.Latest(); live && uint16(got) == counter {
				return time.Since(start)
			}
			if now := time.Now(); now.After(deadline) {
				got, live := w.Latest()
				b.Fatalf("no push of %d within 2 s: latest %d, live %v", counter, got, live)
			} else if now.After(nudge) {
				// The copier instance ended its life after the counter's
				// batch: a batch starts another, as the engine's read of
				// the DBR would.
				nudges++
				nudge = now.Add(200 * time.Microsecond)
				if err := a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToHost, Src: r, SrcOff: dbrOff, Host: make([]byte, 4)}}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, n := range []uint16{1, 64, 512} {
		b.Run(fmt.Sprintf("burst%d", n), func(b *testing.B) {
			for i := 0; i < 20; i++ {
				push(b, n) // the table reaches the GPU; a warm instance
			}
			var total time.Duration
			nudges = 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				total += push(b, n)
			}
			b.ReportMetric(total.Seconds()*1e6/float64(b.N), "us/push")
			b.ReportMetric(float64(nudges), "relaunches")
		})
	}
}

// A push of many WQEs (the eight-loads-in-flight path of the watch's copy,
// and its tail) lands every slot's bytes, also across the ring's wrap.
func TestGPUWatchLargePush(t *testing.T) {
	skipNoWatch(t)
	_, a, r := gpuSetup(t)
	const (
		dbrOff  = 4
		ringOff = 4096
		logSize = 10
		size    = 1 << logSize
	)
	put := func(off int, b []byte) { t.Helper(); devPut(t, a, r, off, b) }
	slot := func(idx uint16) []byte {
		b := make([]byte, 64)
		for i := range b {
			b[i] = byte(int(idx)*5 + i*3 + 1)
		}
		return b
	}
	counter := func(v uint16) {
		var be [4]byte
		binary.BigEndian.PutUint32(be[:], uint32(v))
		put(dbrOff, be[:])
	}
	counter(0)
	w, err := a.WatchSQ(emu.SQWatchSpec{DBR: r, DBROff: dbrOff, Ring: r, RingOff: ringOff, LogSize: logSize})
	require.NoError(t, err)
	defer w.Close()
	mirror := make([]byte, 64*size)
	from := uint16(0)
	// 300 WQEs, 700 (to the ring's end but 24), 501 across the wrap, 37.
	for _, n := range []uint16{300, 700, 501, 37} {
		to := from + n
		ring := make([]byte, 64*size)
		for i := from; i != to; i++ {
			copy(ring[64*(int(i)%size):], slot(i))
		}
		// The new WQEs' slots only (one batch per contiguous piece), then
		// the counter.
		for i := from; i != to; {
			s := int(i) % size
			k := min(int(to-i), size-s)
			put(ringOff+64*s, ring[64*s:64*(s+k)])
			i += uint16(k)
		}
		counter(to)
		waitPush(t, a, r, w, to)
		w.ReadRing(from, to, mirror)
		for i := from; i != to; i++ {
			s := int(i) % size
			require.Equal(t, slot(i), mirror[64*s:64*(s+1)], "slot %d (WQE %d) after the push of %d", s, i, to)
		}
		from = to
	}
}

// skipNoWatch skips a test of the watches when the copier or its watches
// are off.
func skipNoWatch(t testing.TB) {
	t.Helper()
	if !copierEnabled || !watchEnabled {
		t.Skip("the copier or its watches are off (GDAKI_EMU_COPIER=0 or GDAKI_EMU_WATCH=0)")
	}
}

// devPut writes b at off of r with one batch.
func devPut(t testing.TB, a *adapter, r emu.DeviceRange, off int, b []byte) {
	t.Helper()
	require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, DstOff: uint64(off), Host: b}}))
}

// waitPush waits up to 2 s for watch w's push of counter want, keeping a
// copier instance running (and its watches with it) with a small batch into
// r at 512 KiB now and then.
func waitPush(t testing.TB, a *adapter, r emu.DeviceRange, w emu.SQWatch, want uint16) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for k := 0; ; k++ {
		if got, live := w.Latest(); live && uint16(got) == want {
			return
		}
		if time.Now().After(deadline) {
			got, live := w.Latest()
			t.Fatalf("no push of %d within 2 s: latest %d, live %v", want, got, live)
		}
		if k%200 == 199 {
			devPut(t, a, r, 512<<10, []byte{byte(k)})
		}
		time.Sleep(10 * time.Microsecond)
	}
}
