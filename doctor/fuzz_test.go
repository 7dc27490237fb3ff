package doctor

import (
	"strings"
	"testing"
)

// Every parser of bytes that come from the machine (sysfs, procfs, NVML,
// the dynamic loader) runs here on arbitrary input: it must not panic, and
// what it returns must be consistent.

func FuzzParseACS(f *testing.F) {
	f.Fuzz(func(t *testing.T, cfg []byte) {
		acs, found, err := ParseACS(cfg)
		if err != nil && found {
			t.Fatalf("found with error %v", err)
		}
		if found && (acs.Offset < pciExtCapStart || acs.Offset%4 != 0 || acs.Offset+8 > len(cfg)) {
			t.Fatalf("ACS at impossible offset 0x%x in %d bytes", acs.Offset, len(cfg))
		}
	})
}

func FuzzParseKernelRelease(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		major, minor, err := parseKernelRelease(s)
		if err == nil && (major < 0 || minor < 0) {
			t.Fatalf("negative version %d.%d from %q", major, minor, s)
		}
	})
}

func FuzzParseNvidiaVersion(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseNvidiaVersion(s)
		if err == nil && !isDottedVersion(m.Version) {
			t.Fatalf("version %q is not a dotted number", m.Version)
		}
	})
}

func FuzzParseRegistryDwords(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		for k := range parseRegistryDwords(s) {
			if k == "" || strings.ContainsAny(k, ";\n") {
				t.Fatalf("bad key %q", k)
			}
		}
	})
}

func FuzzParseIOMMUCmdline(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		c := parseIOMMUCmdline(s)
		if len(c.Params) > len(strings.Fields(s)) {
			t.Fatalf("more parameters than words")
		}
	})
}

func FuzzParsePortState(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		n, _, err := parsePortState(s)
		if err == nil && (n < 0 || n > 255) {
			t.Fatalf("state %d out of range", n)
		}
	})
}

func FuzzRdmaCoreRelease(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		n, err := rdmaCoreRelease(s)
		if err == nil && n < 0 {
			t.Fatalf("negative release %d", n)
		}
	})
}

func FuzzParsePCIPath(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePCIPath(s)
		if err != nil {
			return
		}
		for _, c := range p.Chain {
			if !isBDF(c) {
				t.Fatalf("chain element %q is not a bus id", c)
			}
		}
		_ = p.BDF()
		_ = p.Bridges()
		// A function is PIX to itself, or PHB when it sits on the root bus
		// with no bridge above it.
		c, _ := classify(pciFunc{Path: p, NUMA: -1}, pciFunc{Path: p, NUMA: -1})
		if want := TopoPIX; len(p.Bridges()) == 0 && c != TopoPHB || len(p.Bridges()) > 0 && c != want {
			t.Fatalf("%q classified %s against itself", s, c)
		}
	})
}

func FuzzNormalizeBusID(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		out, err := NormalizeBusID(s)
		if err != nil {
			return
		}
		if !isBDF(out) {
			t.Fatalf("%q normalised to %q", s, out)
		}
		again, err := NormalizeBusID(out)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", s, out, again, err)
		}
	})
}
