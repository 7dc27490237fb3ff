package wire

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// netns is a network namespace joined to this one by a veth pair, with a /24
// of 10.213.x.0 between them: .1 here, .2 inside.
type netns struct {
	name, vethHere string
	here, there    netip.Addr
	unused         netip.Addr // on the subnet, owned by nobody
}

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// newNetns creates the namespace, or skips the test naming what is missing.
func newNetns(t *testing.T) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network-namespace test needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network-namespace test needs iproute2's ip command (scripts/setup-debian.sh installs it)")
	}
	pid := os.Getpid()
	n := &netns{
		name:     fmt.Sprintf("gdkw%d", pid),
		vethHere: fmt.Sprintf("gdkwa%d", pid),
		here:     netip.AddrFrom4([4]byte{10, 213, byte(pid % 251), 1}),
		there:    netip.AddrFrom4([4]byte{10, 213, byte(pid % 251), 2}),
		unused:   netip.AddrFrom4([4]byte{10, 213, byte(pid % 251), 3}),
	}
	vethThere := fmt.Sprintf("gdkwb%d", pid)
	if err := run("ip", "netns", "add", n.name); err != nil {
		t.Skipf("network-namespace test: cannot create a namespace (needs CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() {
		if err := run("ip", "netns", "del", n.name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		run("ip", "link", "del", n.vethHere) // gone with the namespace already, normally
	})
	in := []string{"ip", "netns", "exec", n.name}
	for _, cmd := range [][]string{
		{"ip", "link", "add", n.vethHere, "type", "veth", "peer", "name", vethThere},
		{"ip", "link", "set", vethThere, "netns", n.name},
		{"ip", "addr", "add", n.here.String() + "/24", "dev", n.vethHere},
		{"ip", "link", "set", n.vethHere, "up"},
		append(append([]string(nil), in...), "ip", "addr", "add", n.there.String()+"/24", "dev", vethThere),
		append(append([]string(nil), in...), "ip", "link", "set", vethThere, "up"),
		append(append([]string(nil), in...), "ip", "link", "set", "lo", "up"),
	} {
		require.NoError(t, run(cmd...))
	}
	return n
}

// TestNetworkNamespace runs a peer in another network namespace, as on
// another host: frames cross a veth pair between 10.213.x.1 and .2.
func TestNetworkNamespace(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a network namespace")
	}
	noLeak(t)
	n := newNetns(t)
	p := listen(t, Config{Addr: n.here})
	assert.Equal(t, GIDFromIPv4(n.here), p.GID())

	pp := startPeer(t, []string{"ip", "netns", "exec", n.name}, EnvAddr+"="+n.there.String())
	require.Equal(t, GIDFromIPv4(n.there), pp.gid)
	exchange(t, p, pp.gid, 2000)

	// A host on the subnet that does not answer (no ARP reply): the dial
	// times out in the background and a Send reports it within the dial
	// timeout; no Send waits for it.
	start := time.Now()
	err := sendFailsWithin(t, p, GIDFromIPv4(n.unused), p.cfg.DialTimeout+schedSlack)
	assert.ErrorIs(t, err, ErrUnreachable)
	t.Logf("silent host: %v (after %v)", err, time.Since(start))

	// The peer dies: Sends fail, each within its bound.
	pp.kill()
	err = sendFailsWithin(t, p, pp.gid, p.cfg.DialTimeout+schedSlack)
	t.Logf("dead peer: %v", err)
}
