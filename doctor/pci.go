package doctor

import (
	"fmt"
	"strconv"
	"strings"
)

// pciPath is where a PCI function sits in the hierarchy, from its sysfs
// device path: /sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:8a:00.0
// has host bridge "pci0000:80" and chain [80:01.0 81:00.0 8a:00.0] (the
// bridges from the root port down, the function itself last).
type pciPath struct {
	HostBridge string
	Chain      []string
}

// BDF is the function itself.
func (p pciPath) BDF() string { return p.Chain[len(p.Chain)-1] }

// Bridges are the bridges above the function, root port first.
func (p pciPath) Bridges() []string { return p.Chain[:len(p.Chain)-1] }

// isBDF reports whether s is a PCI address "dddd:bb:dd.f" (hex, lower or
// upper case).
func isBDF(s string) bool {
	if len(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.' {
		return false
	}
	for i, r := range s {
		if i == 4 || i == 7 || i == 10 {
			continue
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return s[11] >= '0' && s[11] <= '7'
}

// parsePCIPath reads a resolved sysfs device path.
func parsePCIPath(p string) (pciPath, error) {
	var out pciPath
	for _, c := range splitPath(p) {
		if strings.HasPrefix(c, "pci") && out.HostBridge == "" && len(out.Chain) == 0 {
			out.HostBridge = c
			continue
		}
		if out.HostBridge != "" && isBDF(c) {
			out.Chain = append(out.Chain, strings.ToLower(c))
		}
	}
	if out.HostBridge == "" || len(out.Chain) == 0 {
		return pciPath{}, fmt.Errorf("parse PCI device path %q: %w", p, ErrParse)
	}
	return out, nil
}

// NormalizeBusID turns an NVML or CUDA bus id ("00000000:8A:00.0") into the
// sysfs form ("0000:8a:00.0").
func NormalizeBusID(id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	dom, rest, ok := strings.Cut(id, ":")
	if !ok {
		return "", fmt.Errorf("normalize PCI bus id %q: %w", id, ErrParse)
	}
	if strings.Count(rest, ":") == 0 {
		// "bb:dd.f" with no domain.
		rest, dom = id, "0"
	}
	d, err := strconv.ParseUint(dom, 16, 32)
	if err != nil || d > 0xffff {
		return "", fmt.Errorf("normalize PCI bus id %q: %w", id, ErrParse)
	}
	out := fmt.Sprintf("%04x:%s", d, rest)
	if !isBDF(out) {
		return "", fmt.Errorf("normalize PCI bus id %q: %w", id, ErrParse)
	}
	return out, nil
}

// TopoClass is how directly two PCIe functions reach each other, named as
// nvidia-smi topo -m names the classes; the topology check reports one.
type TopoClass string

// The topology classes, from the closest to the farthest.
const (
	TopoPIX  TopoClass = "PIX"  // at most one PCIe switch between the two
	TopoPXB  TopoClass = "PXB"  // several switches/bridges, no host bridge
	TopoPHB  TopoClass = "PHB"  // through a PCIe host bridge (the CPU)
	TopoNODE TopoClass = "NODE" // across host bridges within one NUMA node
	TopoSYS  TopoClass = "SYS"  // across NUMA nodes (the SMP interconnect)
)

// pciFunc is one endpoint for classification.
type pciFunc struct {
	Path pciPath
	NUMA int // -1 when unknown
}

// classify returns the topology class between two functions and a sentence
// saying why.
func classify(a, b pciFunc) (TopoClass, string) {
	if a.Path.HostBridge != b.Path.HostBridge {
		if a.NUMA >= 0 && b.NUMA >= 0 && a.NUMA != b.NUMA {
			return TopoSYS, fmt.Sprintf("different NUMA nodes (%d and %d): traffic crosses the CPU interconnect", a.NUMA, b.NUMA)
		}
		return TopoNODE, fmt.Sprintf("different PCIe root complexes (%s and %s) on NUMA node %s: traffic crosses the host bridges", a.Path.HostBridge, b.Path.HostBridge, numaString(a.NUMA))
	}
	// Longest common prefix of the two chains, excluding the functions.
	ab, bb := a.Path.Bridges(), b.Path.Bridges()
	common := 0
	for common < len(ab) && common < len(bb) && ab[common] == bb[common] {
		common++
	}
	if common == 0 {
		return TopoPHB, fmt.Sprintf("the only common parent is host bridge %s", a.Path.HostBridge)
	}
	// Bridges below the common one on each side: one switch puts each
	// function directly below one of its downstream ports.
	belowA, belowB := len(ab)-common, len(bb)-common
	if belowA <= 1 && belowB <= 1 {
		return TopoPIX, fmt.Sprintf("one PCIe switch (common bridge %s)", ab[common-1])
	}
	return TopoPXB, fmt.Sprintf("%d bridges between them below common bridge %s, no host bridge", belowA+belowB, ab[common-1])
}

// bridgesBetween lists the bridges that peer traffic between a and b may
// cross: every bridge below the deepest common one on both sides, plus that
// common bridge; for different root complexes every bridge of both paths.
func bridgesBetween(a, b pciPath) []string {
	ab, bb := a.Bridges(), b.Bridges()
	common := 0
	if a.HostBridge == b.HostBridge {
		for common < len(ab) && common < len(bb) && ab[common] == bb[common] {
			common++
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if common > 0 {
		add(ab[common-1])
	}
	for _, s := range ab[common:] {
		add(s)
	}
	for _, s := range bb[common:] {
		add(s)
	}
	return out
}
