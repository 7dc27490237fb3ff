package wire

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// envPeerRole, when set in the environment of the test binary, turns it into
// a wire peer for the cross-process tests instead of running the tests.
const envPeerRole = "GDAKI_WIRE_TEST_PEER"

func TestMain(m *testing.M) {
	if os.Getenv(envPeerRole) == "echo" {
		os.Exit(runEchoPeer(os.Stdin, os.Stdout, os.Stderr))
	}
	trackStacks.Store(true)
	os.Exit(checkLeaks(m.Run()))
}

// runEchoPeer listens (on $GDAKI_EMU_ADDR / $GDAKI_EMU_PORT when set),
// prints "GID <gid>" and answers every frame to its source: a frame with a
// payload with a READ_RESPONSE_ONLY carrying the same payload, any other
// with an ACK; both with the request's PSN and MSN = PSN. It exits when its
// stdin closes.
func runEchoPeer(stdin io.Reader, stdout, stderr io.Writer) int {
	p, err := Listen(Config{})
	if err != nil {
		fmt.Fprintln(stderr, "peer:", err)
		return 1
	}
	p.SetHandler(func(f *Frame) {
		r := Frame{
			Opcode: OpAck, SrcGID: p.GID(), DstGID: f.SrcGID, SrcQPN: f.DstQPN, DstQPN: f.SrcQPN, PSN: f.PSN,
			AETH: AETH{Syndrome: AckSyndrome(31), MSN: f.PSN}, Route: f.Route,
		}
		if len(f.Payload) > 0 {
			r.Opcode, r.Payload = OpReadResponseOnly, f.Payload
		}
		if err := p.Send(&r); err != nil {
			fmt.Fprintln(stderr, "peer:", err)
		}
	})
	fmt.Fprintf(stdout, "GID %s\n", p.GID())
	io.Copy(io.Discard, stdin)
	if err := p.Close(); err != nil {
		fmt.Fprintln(stderr, "peer:", err)
		return 1
	}
	return 0
}

// peerProc is an echo peer running in another process.
type peerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	gid    GID
	stderr strings.Builder
}

// startPeer runs the test binary as an echo peer, behind the given command
// prefix (for example "ip netns exec NS"), with extra environment.
func startPeer(t *testing.T, prefix []string, env ...string) *peerProc {
	t.Helper()
	args := append(append([]string(nil), prefix...), os.Args[0], "-test.run=^$")
	pp := &peerProc{cmd: exec.Command(args[0], args[1:]...)}
	pp.cmd.Env = append(append(os.Environ(), envPeerRole+"=echo"), env...)
	pp.cmd.Stderr = &pp.stderr
	var err error
	pp.stdin, err = pp.cmd.StdinPipe()
	require.NoError(t, err)
	out, err := pp.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, pp.cmd.Start())
	t.Cleanup(func() { pp.stop(t) })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
		io.Copy(io.Discard, out)
	}()
	select {
	case s := <-line:
		var str string
		_, err := fmt.Sscanf(s, "GID %s", &str)
		require.NoError(t, err, "peer said %q; stderr: %s", s, pp.stderr.String())
		a, err := netip.ParseAddr(str)
		require.NoError(t, err)
		pp.gid = GID(a.As16())
	case <-time.After(10 * time.Second):
		t.Fatalf("peer did not start within 10 s")
	}
	return pp
}

// stop closes the peer's stdin and waits for it to exit (killing it after
// five seconds).
func (pp *peerProc) stop(t *testing.T) {
	if pp.cmd.ProcessState != nil {
		return
	}
	pp.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- pp.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("peer exited: %v; stderr: %s", err, pp.stderr.String())
		}
	case <-time.After(5 * time.Second):
		pp.cmd.Process.Kill()
		<-done
		t.Errorf("peer did not exit within 5 s; stderr: %s", pp.stderr.String())
	}
}

// kill ends the peer at once, as a crash would.
func (pp *peerProc) kill() {
	if pp.cmd.ProcessState == nil {
		pp.cmd.Process.Kill()
		pp.cmd.Wait()
	}
}

// exchange sends n frames to the peer and checks the n answers: in order,
// for the right PSN, with the payload echoed.
func exchange(t *testing.T, p *Port, dst GID, n int) {
	t.Helper()
	got := make(collector, n)
	p.SetHandler(got.handle)
	defer p.SetHandler(nil)
	for i := 0; i < n; i++ {
		f := Frame{Opcode: OpSendOnly, SrcGID: p.GID(), DstGID: dst, SrcQPN: 7, DstQPN: 9, PSN: uint32(i), Payload: []byte(fmt.Sprintf("frame %d", i))}
		if i%2 == 1 {
			f.Opcode, f.Payload = OpReadRequest, nil
		}
		require.NoError(t, p.Send(&f))
	}
	for i := 0; i < n; i++ {
		g := got.next(t)
		require.Equal(t, uint32(i), g.PSN, "answers in order")
		require.Equal(t, uint32(i), g.AETH.MSN)
		require.Equal(t, dst, g.SrcGID)
		require.Equal(t, uint32(7), g.DstQPN)
		if i%2 == 0 {
			require.Equal(t, OpReadResponseOnly, g.Opcode)
			require.Equal(t, fmt.Sprintf("frame %d", i), string(g.Payload))
		} else {
			require.Equal(t, OpAck, g.Opcode)
		}
	}
}

// sendFailsWithin checks that, once the peer is gone, Send reports it: no
// Send waits and an error comes within bound.
func sendFailsWithin(t *testing.T, p *Port, dst GID, bound time.Duration) error {
	t.Helper()
	f := Frame{Opcode: OpSendOnly, SrcGID: p.GID(), DstGID: dst}
	err := sendUntilError(t, p, &f, 20*time.Millisecond+schedSlack, bound)
	require.ErrorIs(t, err, ErrUnreachable)
	return err
}

// TestCrossProcess: frames to a peer process of the same host travel on a
// shared-memory link (or on TCP where the peer refuses one), in order, the
// answers back on the same link; once the peer dies, Send says so.
func TestCrossProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		shm  uint64
	}{{"shared memory", nil, 1}, {"peer refuses shared memory", []string{EnvShm + "=0"}, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			noLeak(t)
			p := listen(t, Config{})
			pp := startPeer(t, nil, tc.env...)
			require.NotEqual(t, p.GID(), pp.gid)
			exchange(t, p, pp.gid, 2000)
			require.Equal(t, tc.shm, p.Stats().SharedMemory)
			pp.kill()
			err := sendFailsWithin(t, p, pp.gid, p.cfg.DialTimeout+schedSlack)
			t.Logf("after the peer died: %v", err)
		})
	}
}
