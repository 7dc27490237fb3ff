package wire

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// leakReport returns what the tests left behind: ports still open (with the
// stack that opened each) and, once every port is closed, goroutines of
// this package still running (with their stacks).
func leakReport() string {
	if ports := openPorts(); len(ports) > 0 {
		return fmt.Sprintf("%d ports left open:\n%s", len(ports), strings.Join(ports, "\n"))
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		var live []string
		buf := make([]byte, 1<<20)
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "emu/wire.(*conn)") || strings.Contains(g, "emu/wire.(*Port)") {
				live = append(live, g)
			}
		}
		if len(live) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%d goroutines of closed ports still running:\n%s", len(live), strings.Join(live, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkLeaks is TestMain's last step: it turns a clean run into a failure
// when something was left open.
func checkLeaks(code int) int {
	if code != 0 {
		return code
	}
	if r := leakReport(); r != "" {
		fmt.Fprintln(os.Stderr, "wire: leak check:", r)
		return 1
	}
	return 0
}

// TestLeakReportNamesOpenPort: the leak check names a port left open and
// the test that opened it.
func TestLeakReportNamesOpenPort(t *testing.T) {
	p, err := Listen(Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := leakReport()
	p.Close()
	if !strings.Contains(r, p.GID().String()) || !strings.Contains(r, "TestLeakReportNamesOpenPort") {
		t.Fatalf("leak report does not name the port and its opener:\n%s", r)
	}
	if r := leakReport(); r != "" {
		t.Fatalf("leak report after Close: %s", r)
	}
}
