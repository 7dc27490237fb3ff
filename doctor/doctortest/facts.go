package doctortest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gdaki/gpunetio/doctor"
)

// Facts is what a fake machine answers where no file does. It is read from
// facts.json at the root of a tree.
type Facts struct {
	GPUs []doctor.GPU `json:"gpus"`
	// GPUError, when set, makes GPUs fail with an error matching
	// doctor.ErrNoGPUDriver ("no driver").
	GPUError      string `json:"gpu_error"`
	DriverVersion string `json:"driver_version"`
	// Libs maps a soname to the loaded path and the symbols it has; a
	// soname missing here fails to load.
	Libs map[string]FakeLib `json:"libs"`
	// CUDADmabuf maps a GPU bus id to the dmabuf attribute; a missing bus id
	// makes the probe report doctor.ErrProbeUnavailable.
	CUDADmabuf map[string]bool `json:"cuda_dmabuf"`
	// Doorbell maps an RDMA device name to the probe's error text; "" is
	// success. A missing device is doctor.ErrProbeUnavailable.
	Doorbell map[string]string `json:"doorbell"`
	Emulated []string          `json:"emulated"`
}

// FakeLib is one loadable library.
type FakeLib struct {
	Path    string   `json:"path"`
	Symbols []string `json:"symbols"`
}

// LoadFacts reads root/facts.json.
func LoadFacts(root string) (Facts, error) {
	var f Facts
	b, err := os.ReadFile(filepath.Join(root, "facts.json"))
	if err != nil {
		return f, fmt.Errorf("load facts: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("load facts: %w", err)
	}
	return f, nil
}

// Env returns a doctor.Env over the tree root with the fakes of f.
func (f Facts) Env(root string) doctor.Env {
	return doctor.Env{
		Root:     root,
		GPUs:     fakeGPUs{f},
		Libs:     fakeLibs{f},
		CUDA:     fakeCUDA{f},
		UAR:      fakeDoorbell{f},
		Emulated: f.Emulated,
	}
}

// Scenario extracts archive and returns the Env for it.
func Scenario(t testing.TB, archive string) doctor.Env {
	t.Helper()
	root := Tree(t, archive)
	f, err := LoadFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	return f.Env(root)
}

type fakeGPUs struct{ f Facts }

func (g fakeGPUs) GPUs() ([]doctor.GPU, error) {
	if g.f.GPUError != "" {
		return nil, fmt.Errorf("fake NVML: %s: %w", g.f.GPUError, doctor.ErrNoGPUDriver)
	}
	return append([]doctor.GPU(nil), g.f.GPUs...), nil
}

func (g fakeGPUs) DriverVersion() (string, error) {
	if g.f.GPUError != "" {
		return "", fmt.Errorf("fake NVML: %s: %w", g.f.GPUError, doctor.ErrNoGPUDriver)
	}
	return g.f.DriverVersion, nil
}

type fakeLibs struct{ f Facts }

func (l fakeLibs) Probe(soname string, symbols ...string) (doctor.Library, error) {
	fl, ok := l.f.Libs[soname]
	if !ok {
		return doctor.Library{}, fmt.Errorf("dlopen %s: cannot open shared object file: %w", soname, doctor.ErrLibraryNotFound)
	}
	have := map[string]bool{}
	for _, s := range fl.Symbols {
		have[s] = true
	}
	lib := doctor.Library{Path: fl.Path, Symbols: map[string]bool{}}
	for _, s := range symbols {
		lib.Symbols[s] = have[s]
	}
	return lib, nil
}

type fakeCUDA struct{ f Facts }

func (c fakeCUDA) DmabufSupported(busID string) (bool, error) {
	v, ok := c.f.CUDADmabuf[busID]
	if !ok {
		return false, fmt.Errorf("fake CUDA: no answer for %s: %w", busID, doctor.ErrProbeUnavailable)
	}
	return v, nil
}

type fakeDoorbell struct{ f Facts }

func (d fakeDoorbell) MapDoorbell(dev, gpu string) (string, error) {
	msg, ok := d.f.Doorbell[dev]
	if !ok {
		return "", fmt.Errorf("fake doorbell probe: no answer for %s: %w", dev, doctor.ErrProbeUnavailable)
	}
	if msg != "" {
		return "", errors.New(msg)
	}
	return fmt.Sprintf("UAR page of %s registered for GPU %s as I/O memory", dev, gpu), nil
}
