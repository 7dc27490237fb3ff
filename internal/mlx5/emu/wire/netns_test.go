package wire

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// netns is a network namespace joined to this one by a veth pair, with a /29
// of 10.213.0.0/16 between them (netnsSubnet): .1 here, .2 inside.
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
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatalf("network-namespace test: interface addresses: %v", err)
	}
	sub, err := netnsSubnet(pid, addrs)
	if err != nil {
		t.Fatalf("network-namespace test: %v", err)
	}
	n := &netns{
		name:     fmt.Sprintf("gdkw%d", pid),
		vethHere: fmt.Sprintf("gdkwa%d", pid),
		here:     sub.Addr().Next(),
		there:    sub.Addr().Next().Next(),
		unused:   sub.Addr().Next().Next().Next(),
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
		{"ip", "addr", "add", n.here.String() + "/29", "dev", n.vethHere},
		{"ip", "link", "set", n.vethHere, "up"},
		append(append([]string(nil), in...), "ip", "addr", "add", n.there.String()+"/29", "dev", vethThere),
		append(append([]string(nil), in...), "ip", "link", "set", vethThere, "up"),
		append(append([]string(nil), in...), "ip", "link", "set", "lo", "up"),
	} {
		require.NoError(t, run(cmd...))
	}
	return n
}

// netnsSubnet picks the /29 of 10.213.0.0/16 for the namespace of process
// pid: the namespace and veth names carry the pid, and so does the subnet,
// so that two test runs on one host (whose pids differ) set up two
// namespaces that do not route each other's addresses. The first of the
// 8192 subnets tried is the pid's (pid mod 8192); one that clashes with an
// address of this host, addrs (another run's, or the host's own), is
// skipped.
func netnsSubnet(pid int, addrs []net.Addr) (netip.Prefix, error) {
	const n = 1 << 13 // /29s in a /16
	for k := 0; k < n; k++ {
		i := (pid + k) % n
		sub := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, byte(i >> 5), byte(i&31) << 3}), 29)
		if !subnetInUse(sub, addrs) {
			return sub, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("every /29 of 10.213.0.0/16 has an address on this host")
}

// subnetInUse says whether a route of sub would clash with one of addrs:
// one of them lies in sub, or its network overlaps sub and is no wider
// than a /16 (another run's subnet; a host's 10.0.0.0/8 does not count,
// as the /29 is the more specific route).
func subnetInUse(sub netip.Prefix, addrs []net.Addr) bool {
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		bits, _ := ipn.Mask.Size()
		ip = ip.Unmap()
		if !ip.Is4() {
			continue
		}
		if bits > 32 {
			bits -= 96
		}
		if have := netip.PrefixFrom(ip, bits).Masked(); have.Overlaps(sub) && (bits >= 16 || sub.Contains(ip)) {
			return true
		}
	}
	return false
}

// TestNetnsSubnet: the subnet follows the pid and skips one in use.
func TestNetnsSubnet(t *testing.T) {
	addr := func(s string) net.Addr {
		ip, ipn, err := net.ParseCIDR(s)
		require.NoError(t, err)
		ipn.IP = ip
		return ipn
	}
	sub := func(s string) netip.Prefix { return netip.MustParsePrefix(s) }
	none := []net.Addr{addr("127.0.0.1/8"), addr("192.168.1.5/24"), addr("fe80::1/64")}
	assert.False(t, subnetInUse(sub("10.213.0.8/29"), none))
	assert.True(t, subnetInUse(sub("10.213.0.8/29"), []net.Addr{addr("10.213.0.9/29")}))
	assert.False(t, subnetInUse(sub("10.213.0.8/29"), []net.Addr{addr("10.0.0.1/8")}), "inside a wider network of the host")
	assert.True(t, subnetInUse(sub("10.213.0.8/29"), []net.Addr{addr("10.213.0.10/8")}), "an address of the host in it")
	assert.True(t, subnetInUse(sub("10.213.1.0/29"), []net.Addr{addr("10.213.1.1/24")}), "a /24 as older runs set up")
	assert.False(t, subnetInUse(sub("10.213.0.16/29"), []net.Addr{addr("10.213.0.9/29")}))

	for _, tc := range []struct {
		pid   int
		addrs []net.Addr
		want  string
	}{
		{8193, none, "10.213.0.8/29"},
		{8193, []net.Addr{addr("10.213.0.9/29")}, "10.213.0.16/29"},
		{8193, []net.Addr{addr("10.213.0.1/24")}, "10.213.1.0/29"},
		{8191, none, "10.213.255.248/29"},
		{8191, []net.Addr{addr("10.213.255.249/29")}, "10.213.0.0/29"},
	} {
		got, err := netnsSubnet(tc.pid, tc.addrs)
		require.NoError(t, err)
		assert.Equal(t, sub(tc.want), got, "pid %d, host %v", tc.pid, tc.addrs)
	}
	_, err := netnsSubnet(1, []net.Addr{addr("10.213.0.1/16")})
	assert.Error(t, err, "no /29 left")
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
