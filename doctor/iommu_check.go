package doctor

import (
	"fmt"
	"strings"
)

const fixIOMMU = "Put the IOMMU in pass-through mode: add iommu=pt (Intel: intel_iommu=on iommu=pt) to the kernel command line and reboot, or disable it in the BIOS."

func (r *runner) checkIOMMU() {
	cmdline, cerr := r.fs.readString("/proc/cmdline")
	cmd := parseIOMMUCmdline(cmdline)
	units, uerr := r.fs.list("/sys/class/iommu")
	params := "none"
	if len(cmd.Params) > 0 {
		params = strings.Join(cmd.Params, " ")
	}
	if cerr != nil {
		params = "unknown (" + cerr.Error() + ")"
	}
	if uerr != nil {
		r.add(Result{Name: "iommu", Verdict: Warn, Value: "cannot list IOMMU units: " + uerr.Error(), Fix: fixIOMMU})
		return
	}
	if len(units) == 0 {
		r.add(Result{Name: "iommu", Verdict: Pass, Value: "off (no IOMMU units in /sys/class/iommu); cmdline: " + params})
		return
	}
	// The per-device domain type is the ground truth when sysfs has it.
	var types []string
	translated := false
	for _, bdf := range r.pciDevicesUnderCheck() {
		t, err := r.fs.readString("/sys/bus/pci/devices/" + bdf + "/iommu_group/type")
		if err != nil {
			continue
		}
		types = append(types, bdf+" "+t)
		if t != "identity" {
			translated = true
		}
	}
	v := fmt.Sprintf("on (%s); cmdline: %s", strings.Join(units, ", "), params)
	if len(types) > 0 {
		v += "; domains: " + strings.Join(types, ", ")
	}
	if (len(types) > 0 && !translated) || (len(types) == 0 && cmd.Passthrough) {
		r.add(Result{Name: "iommu", Verdict: Pass, Value: v + " (pass-through)"})
		return
	}
	r.add(Result{Name: "iommu", Verdict: Warn, Value: v + " (DMA translated)", Fix: fixIOMMU})
}

// pciDevicesUnderCheck lists the GPU's and the NICs' bus ids.
func (r *runner) pciDevicesUnderCheck() []string {
	var out []string
	if r.gpuF != nil {
		out = append(out, r.gpuF.Path.BDF())
	}
	for _, n := range r.nics {
		if n.PCI != nil {
			out = append(out, n.PCI.Path.BDF())
		}
	}
	return out
}
