package emu

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain turns on leak tracking and fails a clean run that left a NIC,
// context or object alive, naming each one and the stack that created it.
func TestMain(m *testing.M) {
	leakTracking.Store(true)
	code := m.Run()
	if live := liveObjects(); len(live) > 0 {
		fmt.Fprintf(os.Stderr, "emu: leak check: %d objects left alive:\n%s\n", len(live), strings.Join(live, "\n"))
		code = 1
	}
	os.Exit(code)
}

// TestLeakReportNamesObjects: an object left alive is reported with what it
// is and the test that made it; released, it is gone from the report.
func TestLeakReportNamesObjects(t *testing.T) {
	n := newNIC(t, Config{Name: "emuL"})
	dev, err := n.Open()
	must(t, err)
	p, err := dev.AllocPD()
	must(t, err)
	report := strings.Join(liveObjects(), "\n")
	for _, want := range []string{fmt.Sprintf("PD %d on emuL", p.PDN()), "device context uid", "NIC emuL", "TestLeakReportNamesObjects"} {
		if !strings.Contains(report, want) {
			t.Errorf("leak report lacks %q:\n%s", want, report)
		}
	}
	pdDesc := fmt.Sprintf("PD %d on emuL", p.PDN())
	must(t, p.Dealloc())
	must(t, dev.Close())
	if report := strings.Join(liveObjects(), "\n"); strings.Contains(report, pdDesc) || strings.Contains(report, "device context uid") {
		t.Errorf("released objects still reported:\n%s", report)
	}
}
