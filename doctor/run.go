package doctor

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// nic is one RDMA device under check.
type nic struct {
	Name     string
	Emulated bool
	Sysfs    string   // "/sys/class/infiniband/mlx5_0"; empty when emulated
	PCI      *pciFunc // nil when not a PCI function
}

// runner carries what the checks share during one Run.
type runner struct {
	env  Env
	opt  Options
	fs   rootFS
	rep  Report
	gpu  *GPU
	gpuF *pciFunc
	nics []nic
	// Facts gathered by earlier checks for the aggregate ones.
	dmabufWhyNot []string
	cudaDmabuf   int // -1 unknown, 0 no, 1 yes
	nvidiaLoaded bool
}

// Run performs every check and returns the results in a fixed order.
func Run(env Env, opt Options) Report {
	if opt.BAR1MiB == 0 {
		opt.BAR1MiB = DefaultBAR1MiB
	}
	r := &runner{env: env, opt: opt, fs: newRootFS(env.Root), cudaDmabuf: -1}
	r.checkSDKMode()
	r.checkNICs()
	r.checkGPU()
	for _, n := range r.nics {
		r.checkTopology(n)
		r.checkACS(n)
	}
	r.checkIOMMU()
	r.checkKernel()
	r.checkNvidiaModule()
	r.checkRDMACore()
	r.checkCUDADmabuf()
	r.checkPeermem()
	r.checkRegistration()
	r.checkPeerMappingOverride()
	r.checkPersistence()
	r.checkBAR1()
	r.checkGDRCopy()
	for _, n := range r.nics {
		r.checkDoorbell(n)
	}
	r.checkMlx5Driver()
	for _, n := range r.nics {
		r.checkFirmware(n)
		r.checkPorts(n)
	}
	return r.rep
}

func (r *runner) add(res Result) {
	if res.Verdict == Pass {
		res.Fix = ""
	}
	r.rep.Results = append(r.rep.Results, res)
}

// pciFuncOf locates a PCI function by bus id through /sys/bus/pci/devices.
func (r *runner) pciFuncOf(bdf string) (*pciFunc, error) {
	return r.pciFuncAt("/sys/bus/pci/devices/" + bdf)
}

// pciFuncAt locates the PCI function whose sysfs directory is p (after
// links).
func (r *runner) pciFuncAt(p string) (*pciFunc, error) {
	canon, err := r.fs.resolve(p)
	if err != nil {
		return nil, err
	}
	pp, err := parsePCIPath(canon)
	if err != nil {
		return nil, err
	}
	f := &pciFunc{Path: pp, NUMA: -1}
	if s, err := r.fs.readString(canon + "/numa_node"); err == nil {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			f.NUMA = n
		}
	}
	return f, nil
}

const fixNoNIC = "Install a ConnectX NIC and load its drivers (modprobe mlx5_core mlx5_ib); for development, pass -d emu0 to use an emulated device."

func (r *runner) checkNICs() {
	sysNames, err := r.fs.list("/sys/class/infiniband")
	if err != nil {
		r.add(Result{Name: "nic", Verdict: Fail, Value: err.Error(), Fix: fixNoNIC})
		return
	}
	var names []string
	if r.opt.Device != "" {
		switch {
		case contains(sysNames, r.opt.Device):
			names = []string{r.opt.Device}
		case contains(r.env.Emulated, r.opt.Device):
			r.nics = append(r.nics, nic{Name: r.opt.Device, Emulated: true})
			r.add(Result{Name: "nic", Subject: r.opt.Device, Verdict: Warn,
				Value: "emulated device (software ConnectX, no hardware RDMA)",
				Fix:   "Fine for development and tests; for real GPU-initiated RDMA select an mlx5 device (-d mlx5_0)."})
			return
		default:
			r.add(Result{Name: "nic", Subject: r.opt.Device, Verdict: Fail,
				Value: fmt.Sprintf("device %q not found (real: %s; emulated: %s)", r.opt.Device, listOrNone(sysNames), listOrNone(r.env.Emulated)),
				Fix:   "Pick a device from `gpunetio devices`; " + fixNoNIC})
			return
		}
	} else {
		names = sysNames
	}
	if len(names) == 0 {
		r.add(Result{Name: "nic", Verdict: Fail,
			Value: fmt.Sprintf("no RDMA device in /sys/class/infiniband (emulated: %s)", listOrNone(r.env.Emulated)),
			Fix:   fixNoNIC})
		return
	}
	for _, name := range names {
		n := nic{Name: name, Sysfs: "/sys/class/infiniband/" + name}
		f, perr := r.pciFuncAt(n.Sysfs + "/device")
		driver := "unknown driver"
		if d, err := r.fs.resolve(n.Sysfs + "/device/driver"); err == nil {
			driver = path.Base(d)
		}
		if perr != nil {
			r.nics = append(r.nics, n)
			r.add(Result{Name: "nic", Subject: name, Verdict: Warn,
				Value: fmt.Sprintf("not a PCI device (%s): %v", driver, perr),
				Fix:   "Software RDMA (rxe, siw) cannot be driven by a GPU; use an mlx5 device."})
			continue
		}
		n.PCI = f
		r.nics = append(r.nics, n)
		if !strings.HasPrefix(name, "mlx5") && driver != "mlx5_core" {
			r.add(Result{Name: "nic", Subject: name, Verdict: Warn,
				Value: fmt.Sprintf("%s at %s: not an mlx5 device", driver, f.Path.BDF()),
				Fix:   "gpunetio drives ConnectX/BlueField NICs (mlx5); select one with -d."})
			continue
		}
		r.add(Result{Name: "nic", Subject: name, Verdict: Pass,
			Value: fmt.Sprintf("%s at %s, NUMA node %s", driver, f.Path.BDF(), numaString(f.NUMA))})
	}
}

const fixNoGPU = "Install the NVIDIA driver (open kernel modules) and check that nvidia-smi lists the GPU."

func (r *runner) checkGPU() {
	if r.env.GPUs == nil {
		r.add(Result{Name: "gpu", Verdict: Fail, Value: "no GPU source (NVML) configured", Fix: fixNoGPU})
		return
	}
	gpus, err := r.env.GPUs.GPUs()
	if err != nil {
		r.add(Result{Name: "gpu", Verdict: Fail, Value: "no GPU: " + err.Error(), Fix: fixNoGPU})
		return
	}
	if len(gpus) == 0 {
		r.add(Result{Name: "gpu", Verdict: Fail, Value: "no GPU: NVML lists none", Fix: fixNoGPU})
		return
	}
	var g *GPU
	if r.opt.GPU != "" {
		g = findGPU(gpus, r.opt.GPU)
		if g == nil {
			var have []string
			for _, x := range gpus {
				have = append(have, fmt.Sprintf("%d=%s", x.Index, x.BusID))
			}
			r.add(Result{Name: "gpu", Subject: r.opt.GPU, Verdict: Fail,
				Value: fmt.Sprintf("GPU %q not found (have %s)", r.opt.GPU, strings.Join(have, ", ")),
				Fix:   "Pass -g with a GPU index or PCI bus id from `gpunetio devices`."})
			return
		}
	} else {
		g = r.closestGPU(gpus)
	}
	r.gpu = g
	f, ferr := r.pciFuncOf(g.BusID)
	if ferr == nil {
		r.gpuF = f
	}
	v := fmt.Sprintf("%s at %s", g.Name, g.BusID)
	if ferr != nil {
		r.add(Result{Name: "gpu", Subject: gpuSubject(g), Verdict: Warn,
			Value: v + "; not found in sysfs: " + ferr.Error(),
			Fix:   "The topology and ACS checks need /sys/bus/pci/devices/<bus id>; run on the host, not in a container without /sys."})
		return
	}
	r.add(Result{Name: "gpu", Subject: gpuSubject(g), Verdict: Pass, Value: v + ", NUMA node " + numaString(f.NUMA)})
}

// findGPU matches an index or a bus id.
func findGPU(gpus []GPU, sel string) *GPU {
	if i, err := strconv.Atoi(sel); err == nil {
		for k := range gpus {
			if gpus[k].Index == i {
				return &gpus[k]
			}
		}
		return nil
	}
	want, err := NormalizeBusID(sel)
	if err != nil {
		return nil
	}
	for k := range gpus {
		if gpus[k].BusID == want {
			return &gpus[k]
		}
	}
	return nil
}

var topoRank = map[TopoClass]int{TopoPIX: 0, TopoPXB: 1, TopoPHB: 2, TopoNODE: 3, TopoSYS: 4}

// closestGPU picks the GPU with the best topology class to the first PCI
// NIC, the lowest index on ties or without a NIC.
func (r *runner) closestGPU(gpus []GPU) *GPU {
	sorted := make([]int, len(gpus))
	for i := range sorted {
		sorted[i] = i
	}
	sort.SliceStable(sorted, func(a, b int) bool { return gpus[sorted[a]].Index < gpus[sorted[b]].Index })
	best, bestRank := sorted[0], 99
	var nf *pciFunc
	for _, n := range r.nics {
		if n.PCI != nil {
			nf = n.PCI
			break
		}
	}
	if nf == nil {
		return &gpus[best]
	}
	for _, i := range sorted {
		f, err := r.pciFuncOf(gpus[i].BusID)
		if err != nil {
			continue
		}
		c, _ := classify(*f, *nf)
		if topoRank[c] < bestRank {
			best, bestRank = i, topoRank[c]
		}
	}
	return &gpus[best]
}

func gpuSubject(g *GPU) string { return fmt.Sprintf("GPU%d %s", g.Index, g.BusID) }

func numaString(n int) string {
	if n < 0 {
		return "unknown"
	}
	return strconv.Itoa(n)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// skipReason explains why a GPU-NIC check cannot run, or "".
func (r *runner) skipReason(n nic) string {
	switch {
	case n.Emulated:
		return "emulated device: no PCIe path"
	case n.PCI == nil:
		return "not a PCI device"
	case r.gpu == nil:
		return "no GPU"
	case r.gpuF == nil:
		return "GPU not in sysfs"
	}
	return ""
}
