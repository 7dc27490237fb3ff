package doctor

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gdaki/gpunetio/internal/dl"
)

// nvmlLibrary is the library go-nvml loads.
const nvmlLibrary = "libnvidia-ml.so.1"

// NVMLError is an NVML call that failed, with its return code.
type NVMLError struct {
	Op  string // the NVML function, "nvmlDeviceGetBAR1MemoryInfo"
	Ret nvml.Return
	// Loader is the dynamic loader's reason (dlerror) when the library did
	// not load (Ret is ERROR_LIBRARY_NOT_FOUND), else "".
	Loader string
}

// Error names the call, the return code's meaning and its number, and the
// dynamic loader's reason when there is one.
func (e *NVMLError) Error() string {
	s := fmt.Sprintf("%s: %s (NVML %d)", e.Op, nvmlErrorString(e.Ret), int32(e.Ret))
	if e.Loader != "" {
		s += ": " + e.Loader
	}
	return s
}

// loaderReason asks the dynamic loader (internal/dl) why lib does not load:
// go-nvml reports only ERROR_LIBRARY_NOT_FOUND. It returns "" when lib
// loads.
func loaderReason(lib string) string {
	l, err := dl.Open(dl.Now|dl.Local, lib)
	if err == nil {
		_ = l.Close()
		return ""
	}
	var de *dl.Error
	if errors.As(err, &de) {
		return de.Msg
	}
	return err.Error()
}

// Is makes ErrNoGPUDriver match the "no driver / no library" codes.
func (e *NVMLError) Is(target error) bool {
	if target != ErrNoGPUDriver {
		return false
	}
	switch e.Ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_NO_PERMISSION, nvml.ERROR_FUNCTION_NOT_FOUND:
		return true
	}
	return false
}

// nvmlErrorString names a return code without calling into a library that
// may not be loaded.
func nvmlErrorString(r nvml.Return) string {
	switch r {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "libnvidia-ml.so.1 not found"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "NVIDIA driver not loaded"
	case nvml.ERROR_NO_PERMISSION:
		return "no permission"
	case nvml.ERROR_NOT_SUPPORTED:
		return "not supported"
	case nvml.ERROR_FUNCTION_NOT_FOUND:
		return "function not found (driver too old)"
	}
	return r.String()
}

// NVML is the GPUSource of a real host: it loads libnvidia-ml.so.1 at run
// time (go-nvml's dlopen) and unloads it after every call.
type NVML struct{}

func (NVML) session(f func() error) error {
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		e := &NVMLError{Op: "nvmlInit", Ret: ret}
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			e.Loader = loaderReason(nvmlLibrary)
		}
		return e
	}
	err := f()
	if ret := nvml.Shutdown(); ret != nvml.SUCCESS && err == nil {
		err = &NVMLError{Op: "nvmlShutdown", Ret: ret}
	}
	return err
}

// DriverVersion returns the NVIDIA driver version.
func (n NVML) DriverVersion() (string, error) {
	var v string
	err := n.session(func() error {
		s, ret := nvml.SystemGetDriverVersion()
		if ret != nvml.SUCCESS {
			return &NVMLError{Op: "nvmlSystemGetDriverVersion", Ret: ret}
		}
		v = s
		return nil
	})
	return v, err
}

// GPUs lists every GPU with the facts the doctor and the device list need.
// A fact a GPU does not support (BAR1 on some vGPUs) is left zero.
func (n NVML) GPUs() ([]GPU, error) {
	var out []GPU
	err := n.session(func() error {
		count, ret := nvml.DeviceGetCount()
		if ret != nvml.SUCCESS {
			return &NVMLError{Op: "nvmlDeviceGetCount", Ret: ret}
		}
		for i := 0; i < count; i++ {
			g, err := nvmlGPU(i)
			if err != nil {
				return err
			}
			out = append(out, g)
		}
		return nil
	})
	return out, err
}

func nvmlGPU(i int) (GPU, error) {
	d, ret := nvml.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return GPU{}, &NVMLError{Op: "nvmlDeviceGetHandleByIndex", Ret: ret}
	}
	g := GPU{Index: i}
	pci, ret := d.GetPciInfo()
	if ret != nvml.SUCCESS {
		return GPU{}, &NVMLError{Op: "nvmlDeviceGetPciInfo", Ret: ret}
	}
	id, err := NormalizeBusID(cString(pci.BusId[:]))
	if err != nil {
		return GPU{}, fmt.Errorf("GPU %d: %w", i, err)
	}
	g.BusID = id
	if s, ret := d.GetName(); ret == nvml.SUCCESS {
		g.Name = s
	}
	if s, ret := d.GetUUID(); ret == nvml.SUCCESS {
		g.UUID = s
	}
	if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.MemTotal, g.MemUsed = m.Total, m.Used
	}
	if b, ret := d.GetBAR1MemoryInfo(); ret == nvml.SUCCESS {
		g.BAR1Total, g.BAR1Used, g.BAR1Free = b.Bar1Total, b.Bar1Used, b.Bar1Free
	}
	if p, ret := d.GetPersistenceMode(); ret == nvml.SUCCESS {
		g.Persistence = p == nvml.FEATURE_ENABLED
	}
	return g, nil
}

func cString(b []uint8) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
