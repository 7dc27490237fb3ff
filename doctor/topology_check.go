package doctor

import (
	"errors"
	"fmt"
	"strings"
)

func (r *runner) checkTopology(n nic) {
	if why := r.skipReason(n); why != "" {
		r.add(Result{Name: "topology", Subject: n.Name, Verdict: Skip, Value: why})
		return
	}
	c, why := classify(*r.gpuF, *n.PCI)
	res := Result{Name: "topology", Subject: n.Name,
		Value: fmt.Sprintf("%s: %s %s - %s: %s", c, r.gpu.BusID, n.Name, n.PCI.Path.BDF(), why)}
	switch c {
	case TopoPIX, TopoPXB:
		res.Verdict = Pass
	case TopoPHB:
		res.Verdict = Warn
		res.Fix = "GPU and NIC meet at the CPU's host bridge: peer traffic is slower and some CPUs block it. Prefer a NIC under the GPU's PCIe switch (nvidia-smi topo -m)."
	case TopoNODE:
		res.Verdict = Warn
		res.Fix = "GPU and NIC are on different root complexes: peer traffic crosses the host bridges. Prefer a GPU/NIC pair on one PCIe switch (nvidia-smi topo -m)."
	default:
		res.Verdict = Warn
		res.Fix = "GPU and NIC are on different NUMA nodes: peer traffic crosses the CPU interconnect and is much slower. Use the NIC attached to the GPU's socket (-d/-g)."
	}
	r.add(res)
}

func (r *runner) checkACS(n nic) {
	if why := r.skipReason(n); why != "" {
		r.add(Result{Name: "acs", Subject: n.Name, Verdict: Skip, Value: why})
		return
	}
	bridges := bridgesBetween(r.gpuF.Path, n.PCI.Path)
	if len(bridges) == 0 {
		r.add(Result{Name: "acs", Subject: n.Name, Verdict: Pass, Value: "no PCIe bridge between GPU and NIC"})
		return
	}
	var seen, fixes, unreadable []string
	verdict := Pass
	for _, b := range bridges {
		cfg, err := r.fs.readFile("/sys/bus/pci/devices/" + b + "/config")
		if err != nil {
			unreadable = append(unreadable, b)
			seen = append(seen, fmt.Sprintf("%s (%v)", b, err))
			continue
		}
		acs, found, err := ParseACS(cfg)
		switch {
		case errors.Is(err, ErrNoExtendedConfig):
			unreadable = append(unreadable, b)
			seen = append(seen, b+" extended config unreadable")
		case err != nil:
			unreadable = append(unreadable, b)
			seen = append(seen, fmt.Sprintf("%s (%v)", b, err))
		case !found:
			seen = append(seen, b+" no ACS")
		case acs.Redirects() != 0:
			verdict = Fail
			seen = append(seen, fmt.Sprintf("%s ACSCtl=0x%04x (%s)", b, acs.Control, ACSNames(acs.Control)))
			fixes = append(fixes, fmt.Sprintf("setpci -s %s ECAP_ACS+0x6.w=0000", b))
		default:
			seen = append(seen, fmt.Sprintf("%s ACSCtl=0x%04x (%s)", b, acs.Control, ACSNames(acs.Control)))
		}
	}
	res := Result{Name: "acs", Subject: n.Name, Verdict: verdict, Value: strings.Join(seen, "; ")}
	switch {
	case verdict == Fail:
		res.Fix = "ACS redirects peer traffic to the root complex. As root, each boot: " + strings.Join(fixes, "; ") + " (or disable ACS in the BIOS)."
	case len(unreadable) > 0:
		res.Verdict = Warn
		res.Fix = "Run doctor as root: sysfs shows only 64 bytes of PCI config space to other users, so ACS on " + strings.Join(unreadable, ", ") + " was not checked."
	}
	r.add(res)
}
