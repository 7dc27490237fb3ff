package verbs

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/peerproc"
)

// The cross-process test re-executes the test binary as the peer (env
// envVerbsPeer=1, running only TestVerbsPeerProcess). Each process opens
// its own emulated emu0 (each process's emulated NICs have their own
// loopback address, hence their own GID) and the two QPs meet over the
// emulator's TCP wire. The processes exchange GID, QPN, buffer address and
// rkey as "VERBS ..." lines: the parent writes to the child's stdin and
// reads the child's stdout.
const envVerbsPeer = "GDAKI_VERBS_TEST_PEER"

// xpTag starts every line of the two processes.
const xpTag = "VERBS"

// Offsets in the 1 MiB buffers of both sides.
const (
	xpWriteOff   = 1000   // the parent WRITEs 200000 bytes here in the child
	xpWriteLen   = 200000 //
	xpReadOff    = 1 << 19
	xpReadLen    = 4096
	xpWordOff    = 900000 // the word atomics work on, on both sides
	xpResultOff  = 950000 // where atomics return the original value
	xpBackOff    = 0      // the child WRITEs 4096 bytes here in the parent
	xpBackReadTo = 600000 // where the child READs the parent's read region to
)

// info is this side's endpoint: its QP and its whole buffer.
func (e *end) info() Endpoint {
	return Endpoint{GID: e.gid, QPN: e.qp.QPN(), Regions: []Region{e.mr.Region()}}
}

// endpointWord is ep in this package's binary encoding, as one hex word of a
// line; parseEndpointWord reads it back.
func endpointWord(ep Endpoint) string {
	b, err := ep.MarshalBinary()
	if err != nil {
		return "invalid:" + strings.ReplaceAll(err.Error(), " ", "_")
	}
	return hex.EncodeToString(b)
}

func parseEndpointWord(f []string) (Endpoint, error) {
	var ep Endpoint
	if len(f) != 1 {
		return ep, fmt.Errorf("peer line has %d words, want 1", len(f))
	}
	b, err := hex.DecodeString(f[0])
	if err != nil {
		return ep, fmt.Errorf("peer endpoint %q: %w", f[0], err)
	}
	if err := ep.UnmarshalBinary(b); err != nil {
		return ep, err
	}
	if len(ep.Regions) != 1 {
		return ep, fmt.Errorf("peer endpoint has %d regions, want 1", len(ep.Regions))
	}
	return ep, nil
}

// xpOpts are both sides' options. The peer is another process, which a
// loaded machine may not run for tens of milliseconds (CI runs packages in
// parallel on two cores): the default retry budget, (7+1) x 4.096 us x
// 2^10 = 34 ms, then ends a WRITE with IBV_WC_RETRY_EXC_ERR, as a 50 ms
// SIGSTOP of the child does. Timeout 16 gives (7+1) x 268 ms = 2.1 s, as
// the emulator's own cross-process tests have.
func xpOpts() pairOpts {
	o := defaultPairOpts()
	o.bufSize = 1 << 20
	o.ackTimeout = 16
	return o
}

func pattern(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*31)
	}
}

func hasPattern(b []byte, seed byte) bool {
	for i := range b {
		if b[i] != seed+byte(i*31) {
			return false
		}
	}
	return true
}

// TestVerbsPeerProcess is the child's side; it is skipped in a normal run.
func TestVerbsPeerProcess(t *testing.T) {
	if os.Getenv(envVerbsPeer) != "1" {
		t.Skip("runs only as the peer process of TestCrossProcessRC")
	}
	o := xpOpts()
	e := newEnd(t, "emu0", o)
	pattern(e.buf[xpReadOff:xpReadOff+xpReadLen], 0x5a)
	binary.LittleEndian.PutUint64(e.buf[xpWordOff:], 41)
	peerproc.Say(xpTag, "HELLO %s", endpointWord(e.info()))
	var parent Endpoint
	peerproc.Serve(xpTag, func(word string, args []string) {
		switch word {
		case "PEER":
			p, err := parseEndpointWord(args)
			require.NoError(t, err)
			parent = p
			connectTo(t, e.qp, p.QPN, p.GID, o)
			peerproc.Say(xpTag, "READY")
		case "CHECK": // did the parent's WRITE land?
			peerproc.Say(xpTag, "CHECKED %v", hasPattern(e.buf[xpWriteOff:xpWriteOff+xpWriteLen], 7))
		case "WORD": // what the parent's atomics left
			peerproc.Say(xpTag, "WORD %d", binary.LittleEndian.Uint64(e.buf[xpWordOff:]))
		case "DO": // the child's turn: WRITE, READ and fetch-add on the parent
			peerproc.Say(xpTag, "DONE %s", childOps(t, e, parent))
		}
	})
}

// childOps runs the child's operations on the parent and reports "ok" or
// what went wrong (a single word-free-of-spaces token list).
func childOps(t *testing.T, e *end, p Endpoint) string {
	lkey := e.mr.LKey()
	pattern(e.buf[0:4096], 0x3c)
	err := e.qp.PostSend(
		SendWR{WRID: 1, Opcode: WRRDMAWrite, SGL: []SGE{{Addr: e.addr(0), Length: 4096, LKey: lkey}},
			RemoteAddr: p.Regions[0].Addr + xpBackOff, RKey: p.Regions[0].RKey},
		SendWR{WRID: 2, Opcode: WRRDMARead, SGL: []SGE{{Addr: e.addr(xpBackReadTo), Length: xpReadLen, LKey: lkey}},
			RemoteAddr: p.Regions[0].Addr + xpReadOff, RKey: p.Regions[0].RKey, Signaled: true},
		SendWR{WRID: 3, Opcode: WRAtomicFetchAdd, Compare: 5, SGL: []SGE{{Addr: e.addr(xpResultOff), Length: 8, LKey: lkey}},
			RemoteAddr: p.Regions[0].Addr + xpWordOff, RKey: p.Regions[0].RKey, Signaled: true, Fence: true})
	if err != nil {
		return "post:" + strings.ReplaceAll(err.Error(), " ", "_")
	}
	wcs := make([]WC, 2)
	n, err := e.cq.PollWait(wcs, 2, 10*time.Second)
	if err != nil {
		return "poll:" + strings.ReplaceAll(err.Error(), " ", "_")
	}
	for _, wc := range wcs[:n] {
		if wc.Status != WCSuccess {
			return fmt.Sprintf("wr%d:%v", wc.WRID, wc.Status)
		}
	}
	if !hasPattern(e.buf[xpBackReadTo:xpBackReadTo+xpReadLen], 0x77) {
		return "read:data"
	}
	if v := binary.LittleEndian.Uint64(e.buf[xpResultOff:]); v != 100 {
		return fmt.Sprintf("fetchadd:original=%d", v)
	}
	return "ok"
}

// startXP starts the child and connects this process's emu0 QP to the
// child's; it returns the child, this side's end and the child's endpoint.
func startXP(t *testing.T) (*peerproc.Proc, *end, Endpoint) {
	t.Helper()
	p := peerproc.Start(t, xpTag, "TestVerbsPeerProcess", envVerbsPeer+"=1")
	child, err := parseEndpointWord(p.Expect(t, "HELLO"))
	require.NoError(t, err)
	o := xpOpts()
	e := newEnd(t, "emu0", o)
	require.NotEqual(t, e.gid, child.GID, "each process's emu0 has its own address")
	pattern(e.buf[xpReadOff:xpReadOff+xpReadLen], 0x77)
	binary.LittleEndian.PutUint64(e.buf[xpWordOff:], 100)
	p.Send("PEER %s", endpointWord(e.info()))
	connectTo(t, e.qp, child.QPN, child.GID, o)
	p.Expect(t, "READY")
	return p, e, child
}

// xpWrite WRITEs 200000 bytes (many MTU packets) into the child, which
// checks them.
func xpWrite(t *testing.T, p *peerproc.Proc, e *end, child Endpoint) {
	t.Helper()
	pattern(e.buf[0:xpWriteLen], 7)
	require.NoError(t, e.qp.PostSend(SendWR{WRID: 1, Opcode: WRRDMAWrite, Signaled: true,
		SGL: []SGE{{Addr: e.addr(0), Length: xpWriteLen, LKey: e.mr.LKey()}}, RemoteAddr: child.Regions[0].Addr + xpWriteOff, RKey: child.Regions[0].RKey}))
	wc := waitWC(t, e.cq, 1)[0]
	require.Equal(t, WCSuccess, wc.Status, "%v", wc.Status)
	p.Send("CHECK")
	assert.Equal(t, []string{"true"}, p.Expect(t, "CHECKED"), "the child's buffer holds what the parent wrote")
}

// TestCrossProcessRC connects RC QPs of two processes and moves data both
// ways with WRITE, READ and atomics; each side verifies what it received.
func TestCrossProcessRC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process")
	}
	p, e, child := startXP(t)
	lkey := e.mr.LKey()

	xpWrite(t, p, e, child)

	// READ the child's pattern.
	require.NoError(t, e.qp.PostSend(SendWR{WRID: 2, Opcode: WRRDMARead, Signaled: true,
		SGL: []SGE{{Addr: e.addr(300000), Length: xpReadLen, LKey: lkey}}, RemoteAddr: child.Regions[0].Addr + xpReadOff, RKey: child.Regions[0].RKey}))
	wc := waitWC(t, e.cq, 1)[0]
	require.Equal(t, WCSuccess, wc.Status, "%v", wc.Status)
	assert.Equal(t, WCRDMARead, wc.Opcode)
	assert.True(t, hasPattern(e.buf[300000:300000+xpReadLen], 0x5a), "READ brought the child's pattern")

	// Fetch-and-add then compare-and-swap on the child's word (41).
	require.NoError(t, e.qp.PostSend(
		SendWR{WRID: 3, Opcode: WRAtomicFetchAdd, Compare: 1, Signaled: true,
			SGL: []SGE{{Addr: e.addr(xpResultOff), Length: 8, LKey: lkey}}, RemoteAddr: child.Regions[0].Addr + xpWordOff, RKey: child.Regions[0].RKey},
		SendWR{WRID: 4, Opcode: WRAtomicCmpSwp, Compare: 42, Swap: 1000, Signaled: true,
			SGL: []SGE{{Addr: e.addr(xpResultOff + 8), Length: 8, LKey: lkey}}, RemoteAddr: child.Regions[0].Addr + xpWordOff, RKey: child.Regions[0].RKey}))
	for _, wc := range waitWC(t, e.cq, 2) {
		require.Equal(t, WCSuccess, wc.Status, "WR %d: %v", wc.WRID, wc.Status)
	}
	assert.Equal(t, uint64(41), binary.LittleEndian.Uint64(e.buf[xpResultOff:]), "fetch-add returns the original")
	assert.Equal(t, uint64(42), binary.LittleEndian.Uint64(e.buf[xpResultOff+8:]), "compare-swap returns the original")
	p.Send("WORD")
	assert.Equal(t, []string{"1000"}, p.Expect(t, "WORD"), "the child's word after add 1 and swap 42->1000")

	// The child's turn: WRITE into the parent, READ from it, fetch-add on it.
	p.Send("DO")
	assert.Equal(t, []string{"ok"}, p.Expect(t, "DONE"), "the child's view of its own operations")
	assert.True(t, hasPattern(e.buf[xpBackOff:xpBackOff+4096], 0x3c), "the child's WRITE landed here")
	assert.Equal(t, uint64(105), binary.LittleEndian.Uint64(e.buf[xpWordOff:]), "the child added 5")
}

// TestCrossProcessRCPeerPause: a peer process that is not scheduled for
// 50 ms (stopped, as a loaded machine may leave it) while a WRITE is in
// flight costs retransmissions, not the WRITE: it completes and lands
// whole once the peer runs again.
func TestCrossProcessRCPeerPause(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process")
	}
	p, e, child := startXP(t)
	p.Stop(t)
	resumed := make(chan error, 1)
	time.AfterFunc(50*time.Millisecond, func() { resumed <- p.Continue() })
	xpWrite(t, p, e, child)
	require.NoError(t, <-resumed)
}
