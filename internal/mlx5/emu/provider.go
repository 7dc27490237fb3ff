package emu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Environment variables read by the provider.
const (
	// EnvDevices is the number of emulated devices listed (emu0..emuN-1);
	// default 2, 0 hides them.
	EnvDevices = "GDAKI_EMU_DEVICES"
	// EnvModel selects the modelled NIC: "cx7" (default) or "cx8".
	EnvModel = "GDAKI_EMU_MODEL"
)

// DefaultDevices is the number of emulated devices when EnvDevices is unset.
const DefaultDevices = 2

func init() { mlx5.RegisterProvider(provider{}) }

type provider struct{}

func (provider) Name() string { return "emu" }

// deviceCount reads EnvDevices.
func deviceCount() (int, error) {
	s := os.Getenv(EnvDevices)
	if s == "" {
		return DefaultDevices, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 64 {
		return 0, fmt.Errorf("emu: %s=%q is not a device count in 0..64", EnvDevices, s)
	}
	return n, nil
}

func (provider) Devices() ([]mlx5.DeviceInfo, error) {
	n, err := deviceCount()
	if err != nil {
		return nil, err
	}
	ds := make([]mlx5.DeviceInfo, n)
	for i := range ds {
		name := fmt.Sprintf("emu%d", i)
		ds[i] = mlx5.DeviceInfo{Name: name, Driver: "emu", NodeGUID: nodeGUID(name)}
	}
	return ds, nil
}

var (
	namedMu  sync.Mutex
	namedNIC = map[string]*NIC{}
)

func (provider) Open(name string) (mlx5.Device, error) {
	n, err := deviceCount()
	if err != nil {
		return nil, err
	}
	var idx int
	if _, err := fmt.Sscanf(name, "emu%d", &idx); err != nil || idx < 0 || idx >= n || fmt.Sprintf("emu%d", idx) != name {
		return nil, fmt.Errorf("emu: open %q: %w (%s=%d)", name, mlx5.ErrNoDevice, EnvDevices, n)
	}
	nic, err := namedDevice(name)
	if err != nil {
		return nil, err
	}
	return nic.Open()
}

// namedDevice returns the process's NIC for name, creating it on first use.
// Named NICs live until the process exits.
func namedDevice(name string) (*NIC, error) {
	namedMu.Lock()
	defer namedMu.Unlock()
	if nic := namedNIC[name]; nic != nil {
		return nic, nil
	}
	model, err := ParseModel(os.Getenv(EnvModel))
	if err != nil {
		return nil, err
	}
	nic, err := NewNIC(Config{Name: name, Model: model})
	if err != nil {
		return nil, err
	}
	untrack(nic) // lives until the process exits, by design
	namedNIC[name] = nic
	return nic, nil
}

// Model is the ConnectX generation the emulator reports.
type Model int

const (
	ModelCX7 Model = iota // ConnectX-7: send_dbr_mode_no_dbr_ext = 0
	ModelCX8              // ConnectX-8: adds the DBR-less (no-DBR) SQ mode
)

// ParseModel parses "cx7", "cx8" or "" (cx7).
func ParseModel(s string) (Model, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "cx7":
		return ModelCX7, nil
	case "cx8":
		return ModelCX8, nil
	}
	return 0, fmt.Errorf("emu: %s=%q: want cx7 or cx8: %w", EnvModel, s, syscall.EINVAL)
}

func nodeGUID(name string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 0x100000001b3
	}
	return 0x0002c90300000000 | h&0xffffffff
}
