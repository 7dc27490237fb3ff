package gpurun

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// ErrNoGPU matches the failure of Open on a machine without a usable GPU or
// CUDA driver.
var ErrNoGPU = errors.New("this example needs an NVIDIA GPU and the CUDA driver (libcuda.so.1); on a machine without one run `make test`")

// QPOptions are the high-level QP settings of one role.
type QPOptions struct {
	Handler     gpunetio.NICHandler
	DBRMode     gpunetio.SendDBRModeExt
	CQCollapsed bool
	// NoKernel skips loading the kernel image (the BW servers launch none).
	NoKernel bool
	// RQWQEs gives the QP a receive queue of that many WQEs with its
	// receive CQ, in GPU memory (gpunetio.QPHLConfig.RQWQEs); 0: none.
	RQWQEs uint16
}

// Env is everything one example process holds.
type Env struct {
	BusID string
	GPU   *gpunetio.GPU
	Ctx   *cuda.Context
	Dev   *verbs.Context
	PD    *verbs.PD
	// NetDev is the device object of DOCA GPUNetIO 3.0 (verbs.OpenDev on
	// PD), on which the high-level QP is made.
	NetDev *verbs.Dev
	QP     *gpunetio.QPHL
	// Local is this side of the RC connection: what Endpoint sends to the
	// peer (without the buffers) and what Connect needs besides.
	Local  verbs.LocalEndpoint
	DevQP  cuda.DevPtr // the device QP to pass to kernels
	Module *cuda.Module

	// Mem is the memory type of the QP's rings and of GPUBuffer
	// (common.Config.Mem).
	Mem gpunetio.MemType

	service  *gpunetio.Service
	bufs     []*Buffer
	counters []*cuda.Buffer[uint32]
	module   []func() error // the kernel module's unload
	ownGPU   bool           // Open made GPU (Close closes it)
	closed   bool
	// abandoned is set when a wait for a kernel gave up: the kernel may
	// still use the QP and the buffers, so nothing is released.
	abandoned bool
}

// Open creates the resources of one role in the order of DOCA GPUNetIO
// 3.0's examples: GPU (and its CUDA context), RDMA device, PD, the port's
// GID and state (the local endpoint), the device object (verbs.OpenDev),
// the high-level QP on it (left in RST), then the kernel module. Progress
// messages go to log.
func Open(prog common.Program, cfg common.Config, opt QPOptions, log io.Writer) (env *Env, err error) {
	if err := cuda.Init(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGPU, err)
	}
	e := &Env{Mem: cfg.Mem}
	defer func() {
		if err != nil {
			if cerr := e.Close(); cerr != nil {
				err = fmt.Errorf("%w (cleanup: %v)", err, cerr)
			}
		}
	}()

	e.BusID = cfg.GPU
	if e.BusID == "" {
		d, err := cuda.DeviceGet(0)
		if err != nil {
			return nil, fmt.Errorf("%w: CUDA device 0: %v", ErrNoGPU, err)
		}
		if e.BusID, err = d.PCIBusID(); err != nil {
			return nil, fmt.Errorf("PCIe address of CUDA device 0: %w", err)
		}
	}
	d, err := cuda.DeviceByPCIBusID(e.BusID)
	if err != nil {
		return nil, fmt.Errorf("invalid GPU bus id provided (-g %s): %w", e.BusID, err)
	}
	fmt.Fprintf(log, "Setting GPU device %d at %s\n", d.Ordinal(), e.BusID)
	if e.GPU, err = gpunetio.NewGPU(e.BusID); err != nil {
		return nil, fmt.Errorf("open GPU %s: %w", e.BusID, err)
	}
	e.ownGPU = true
	if e.Ctx, err = e.GPU.CUDAContext(); err != nil {
		return nil, fmt.Errorf("CUDA context of GPU %s: %w", e.BusID, err)
	}
	if err := e.openQP(prog, cfg, opt, log); err != nil {
		return nil, err
	}

	if !opt.NoKernel {
		path, err := common.FindKernel(cfg.Kernel, prog.Kernel)
		if err != nil {
			return nil, err
		}
		if e.Module, err = e.Ctx.ModuleLoadFile(path); err != nil {
			return nil, fmt.Errorf("load kernel image %s: %w", path, err)
		}
		e.module = append(e.module, e.Module.Unload)
	}
	return e, nil
}

// openQP opens the RDMA device (by prefix, as the reference does), the PD,
// the device object and the high-level QP on e.GPU, and describes the local
// side. It needs no CUDA context, so it also runs on a host-memory GPU
// (gpunetio.NewHostGPU).
func (e *Env) openQP(prog common.Program, cfg common.Config, opt QPOptions, log io.Writer) (err error) {
	if e.Dev, err = verbs.OpenDevicePrefix(cfg.Device); err != nil {
		return fmt.Errorf("open RDMA device %q: %w", cfg.Device, err)
	}
	if e.PD, err = e.Dev.AllocPD(); err != nil {
		return fmt.Errorf("allocate PD on %s: %w", e.Dev.Name(), err)
	}
	// The port's GID and state, before the device object, as DOCA 3.0's
	// examples query them.
	if _, err := e.Dev.QueryGID(common.PortNum, cfg.GIDIndex); err != nil {
		return fmt.Errorf("GID index %d of %s port %d: %w", cfg.GIDIndex, e.Dev.Name(), common.PortNum, err)
	}
	if _, err := e.Dev.QueryPort(common.PortNum); err != nil {
		return fmt.Errorf("%s port %d: %w", e.Dev.Name(), common.PortNum, err)
	}
	if e.NetDev, err = verbs.OpenDev(e.PD); err != nil {
		fmt.Fprintf(log, "Failed to create doca dev: %v\n", err)
		return fmt.Errorf("open the device object of %s: %w", e.Dev.Name(), err)
	}
	e.QP, err = gpunetio.NewQPHL(gpunetio.QPHLConfig{
		GPU: e.GPU, NetDev: e.NetDev, PD: e.PD, SQWQEs: common.SQWQEs,
		NICHandler: opt.Handler, MemRegType: gpunetio.MemRegDefault,
		SendDBRModeExt: opt.DBRMode, CQCollapsed: opt.CQCollapsed, RingMem: e.Mem,
		OrderingSemantic: verbs.OrderingIBTA, RQWQEs: opt.RQWQEs,
	})
	if err != nil {
		return fmt.Errorf("create high-level QP (NIC handler %s, DBR mode %s): %w", opt.Handler, opt.DBRMode, err)
	}
	if e.Local, err = e.QP.LocalEndpoint(common.PortNum, cfg.GIDIndex); err != nil {
		return fmt.Errorf("local endpoint of %s port %d, GID index %d: %w", e.Dev.Name(), common.PortNum, cfg.GIDIndex, err)
	}
	// The reference connects with a 4096-byte path MTU whatever the port's
	// active MTU, and its record carries none: do the same, so that either
	// side may be the reference.
	e.Local.MTU = verbs.EndpointDOCAMTU
	p, err := e.QP.GPUQP().DeviceQP()
	if err != nil {
		return fmt.Errorf("device QP: %w", err)
	}
	e.DevQP = p
	fmt.Fprintf(log, "%s: GPU %s, RDMA device %s (%s), QP 0x%x, NIC handler %s (requested %s)\n",
		prog.Name, e.GPU, e.Dev.Name(), e.Dev.Driver(), e.QP.QP().QPN(), e.QP.NICHandler(), opt.Handler)
	return nil
}

// Endpoint is this side's out-of-band record with the given buffers.
func (e *Env) Endpoint(bufs []verbs.Region) verbs.Endpoint {
	ep := e.Local.Endpoint
	ep.Regions = bufs
	return ep
}

// Connect moves the QP to RTS towards remote with the reference's values
// (verbs.QP.ConnectRC's defaults).
func (e *Env) Connect(remote verbs.Endpoint) error {
	if err := e.QP.ConnectRC(e.Local, remote, nil); err != nil {
		return fmt.Errorf("connect QP 0x%x to QP 0x%x: %w", e.QP.QP().QPN(), remote.QPN, err)
	}
	return nil
}

// Link sends this side's record (with the regions local) over conn, reads
// the peer's (with remoteRegions regions) and connects the QP to the peer's.
func (e *Env) Link(conn net.Conn, local []verbs.Region, remoteRegions int, timeout time.Duration) (verbs.Endpoint, error) {
	peer, err := common.Exchange(conn, e.Endpoint(local), remoteRegions, timeout)
	if err != nil {
		return peer, err
	}
	return peer, e.Connect(peer)
}

// StartTimer makes the timer of the measured launches and starts the CPU
// proxy where the QP's NIC handler needs one (StartProxy). The caller
// closes the timer.
func (e *Env) StartTimer(log io.Writer) (*Timer, error) {
	t, err := e.NewTimer()
	if err != nil {
		return nil, err
	}
	if _, err := e.StartProxy(log); err != nil {
		return nil, errors.Join(err, t.Close())
	}
	return t, nil
}

// StartProxy starts the CPU-proxy service when the resolved NIC handler needs
// the CPU (also when AUTO resolved to CPU_PROXY) and reports whether it did.
func (e *Env) StartProxy(log io.Writer) (bool, error) {
	q := e.QP.GPUQP()
	if !q.CPUAssisted() || e.service != nil {
		return e.service != nil, nil
	}
	s, err := gpunetio.NewService()
	if err != nil {
		return false, fmt.Errorf("start CPU proxy service: %w", err)
	}
	if err := s.Monitor(q); err != nil {
		_ = s.Close()
		return false, fmt.Errorf("CPU proxy service: monitor QP 0x%x: %w", e.QP.QP().QPN(), err)
	}
	e.service = s
	fmt.Fprintf(log, "CPU proxy progress is running (NIC handler %s)\n", q.NICHandler())
	return true, nil
}

// Function returns a kernel entry point of the loaded module.
func (e *Env) Function(name string) (*cuda.Function, error) {
	if e.Module == nil {
		return nil, fmt.Errorf("kernel %s: no kernel image loaded", name)
	}
	f, err := e.Module.Function(name)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	return f, nil
}

// ErrAbandoned is returned by Close when a kernel may still be running.
var ErrAbandoned = errors.New("a kernel may still be running: GPU and NIC resources are left to the process exit")

// Close releases everything (see the package doc), the resources of the
// connection in the order of DOCA GPUNetIO 3.0's examples: high-level QP,
// GPU, device object, PD, RDMA device. After a kernel wait gave up it
// releases nothing and returns ErrAbandoned: the process should exit.
func (e *Env) Close() error {
	if e == nil || e.closed {
		return nil
	}
	if e.abandoned {
		return ErrAbandoned
	}
	e.closed = true
	var errs []error
	if e.service != nil {
		errs = append(errs, e.service.Close())
	}
	for i := len(e.counters) - 1; i >= 0; i-- {
		errs = append(errs, e.counters[i].Free())
	}
	for i := len(e.bufs) - 1; i >= 0; i-- {
		errs = append(errs, e.bufs[i].close())
	}
	for _, unload := range e.module {
		errs = append(errs, unload())
	}
	if e.QP != nil {
		errs = append(errs, e.QP.Close())
	}
	if e.Ctx != nil {
		errs = append(errs, e.Ctx.Release())
	}
	if e.GPU != nil && e.ownGPU {
		errs = append(errs, e.GPU.Close())
	}
	if e.NetDev != nil {
		if err := e.NetDev.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close the device object: %w", err))
		}
	}
	if e.PD != nil {
		errs = append(errs, e.PD.Close())
	}
	if e.Dev != nil {
		errs = append(errs, e.Dev.Close())
	}
	return errors.Join(errs...)
}
