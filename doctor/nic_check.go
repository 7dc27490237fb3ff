package doctor

import (
	"errors"
	"fmt"
	"strings"
)

func (r *runner) checkDoorbell(n nic) {
	switch {
	case r.gpu == nil:
		r.add(Result{Name: "doorbell-map", Subject: n.Name, Verdict: Skip, Value: "no GPU"})
		return
	case n.PCI == nil && !n.Emulated:
		r.add(Result{Name: "doorbell-map", Subject: n.Name, Verdict: Skip, Value: "not a PCI device"})
		return
	case r.env.UAR == nil:
		r.add(Result{Name: "doorbell-map", Subject: n.Name, Verdict: Skip, Value: "not checked: no doorbell probe in this build"})
		return
	}
	v, err := r.env.UAR.MapDoorbell(n.Name, r.gpu.BusID)
	switch {
	case errors.Is(err, ErrProbeUnavailable):
		r.add(Result{Name: "doorbell-map", Subject: n.Name, Verdict: Skip, Value: "not checked: " + err.Error()})
	case err != nil:
		r.add(Result{Name: "doorbell-map", Subject: n.Name, Verdict: Fail, Value: err.Error(),
			Fix: "The GPU cannot map the NIC's doorbell page: set PeerMappingOverride=1 (or run as root), put the IOMMU in pass-through, and clear ACS redirects."})
	default:
		r.add(Result{Name: "doorbell-map", Subject: n.Name, Verdict: Pass, Value: v})
	}
}

func (r *runner) hasPCINIC() bool {
	for _, n := range r.nics {
		if n.PCI != nil {
			return true
		}
	}
	return false
}

func (r *runner) checkMlx5Driver() {
	loaded := r.fs.exists("/sys/module/mlx5_core")
	if !loaded {
		if !r.hasPCINIC() {
			r.add(Result{Name: "mlx5-driver", Verdict: Skip, Value: "mlx5_core not loaded (no NIC)"})
			return
		}
		r.add(Result{Name: "mlx5-driver", Verdict: Warn, Value: "mlx5_core not loaded", Fix: "modprobe mlx5_core mlx5_ib"})
		return
	}
	v := "mlx5_core "
	if ver, err := r.fs.readString("/sys/module/mlx5_core/version"); err == nil && ver != "" {
		v += ver + " (OFED)"
	} else {
		rel, _ := r.fs.readString("/proc/sys/kernel/osrelease")
		v += "inbox (kernel " + orUnknown(rel) + ")"
	}
	if !r.fs.exists("/sys/module/mlx5_ib") {
		r.add(Result{Name: "mlx5-driver", Verdict: Warn, Value: v + "; mlx5_ib not loaded",
			Fix: "modprobe mlx5_ib (the RDMA half of the driver; without it there is no /sys/class/infiniband device)."})
		return
	}
	r.add(Result{Name: "mlx5-driver", Verdict: Pass, Value: v + "; mlx5_ib loaded"})
}

func (r *runner) checkFirmware(n nic) {
	if n.Emulated {
		r.add(Result{Name: "firmware", Subject: n.Name, Verdict: Skip, Value: "emulated device"})
		return
	}
	fw, err := r.fs.readString(n.Sysfs + "/fw_ver")
	if err != nil || fw == "" {
		r.add(Result{Name: "firmware", Subject: n.Name, Verdict: Warn, Value: fmt.Sprintf("fw_ver unreadable: %v", err),
			Fix: "Check the device with mlxfwmanager or ibv_devinfo."})
		return
	}
	v := "fw " + fw
	if b, err := r.fs.readString(n.Sysfs + "/board_id"); err == nil && b != "" {
		v += ", board " + b
	}
	if t, err := r.fs.readString(n.Sysfs + "/hca_type"); err == nil && t != "" {
		v += ", " + t
	}
	r.add(Result{Name: "firmware", Subject: n.Name, Verdict: Pass, Value: v})
}

func (r *runner) checkPorts(n nic) {
	if n.Emulated {
		r.add(Result{Name: "port", Subject: n.Name, Verdict: Skip, Value: "emulated device (see gpunetio devices)"})
		return
	}
	ports, err := r.fs.list(n.Sysfs + "/ports")
	if err != nil || len(ports) == 0 {
		r.add(Result{Name: "port", Subject: n.Name, Verdict: Warn, Value: fmt.Sprintf("no ports listed (%v)", err),
			Fix: "Check the device with ibv_devinfo."})
		return
	}
	for _, p := range ports {
		dir := n.Sysfs + "/ports/" + p
		subj := n.Name + " port " + p
		st, err := r.fs.readString(dir + "/state")
		if err != nil {
			r.add(Result{Name: "port", Subject: subj, Verdict: Warn, Value: err.Error(), Fix: "Check the port with ibv_devinfo."})
			continue
		}
		num, name, err := parsePortState(st)
		if err != nil {
			r.add(Result{Name: "port", Subject: subj, Verdict: Warn, Value: err.Error(), Fix: "Check the port with ibv_devinfo."})
			continue
		}
		parts := []string{name}
		if ll, err := r.fs.readString(dir + "/link_layer"); err == nil {
			parts = append(parts, ll)
		}
		if ps, err := r.fs.readString(dir + "/phys_state"); err == nil {
			parts = append(parts, "phys "+ps)
		}
		if rate, err := r.fs.readString(dir + "/rate"); err == nil {
			parts = append(parts, rate)
		}
		v := strings.Join(parts, ", ")
		if num == 4 { // IB_PORT_ACTIVE
			r.add(Result{Name: "port", Subject: subj, Verdict: Pass, Value: v})
			continue
		}
		r.add(Result{Name: "port", Subject: subj, Verdict: Warn, Value: v,
			Fix: "Connect the cable and bring the link up (ip link set <netdev> up); on InfiniBand a subnet manager must be running."})
	}
}
