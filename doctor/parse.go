package doctor

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// ErrParse is matched by every error of the text parsers of this package.
var ErrParse = errors.New("unrecognised format")

// parseKernelRelease reads major and minor from a kernel release string
// (/proc/sys/kernel/osrelease, "6.8.0-45-generic").
func parseKernelRelease(s string) (major, minor int, err error) {
	s = strings.TrimSpace(s)
	end := strings.IndexFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
	if end >= 0 {
		s = s[:end]
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("parse kernel release %q: %w", s, ErrParse)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major > 1000 || minor > 1000 {
		return 0, 0, fmt.Errorf("parse kernel release %q: %w", s, ErrParse)
	}
	return major, minor, nil
}

// nvidiaModule is what /proc/driver/nvidia/version says about the loaded
// kernel module.
type nvidiaModule struct {
	Version string // "550.54.15"
	Open    bool   // the open GPU kernel modules ("Open Kernel Module")
}

// parseNvidiaVersion reads the first line of /proc/driver/nvidia/version:
// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (...)"
// or, for the proprietary module, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  ...".
func parseNvidiaVersion(s string) (nvidiaModule, error) {
	line, _, _ := strings.Cut(s, "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "NVRM version:")
	if !ok {
		return nvidiaModule{}, fmt.Errorf("parse NVIDIA module version: %w", ErrParse)
	}
	m := nvidiaModule{Open: strings.Contains(rest, "Open Kernel Module")}
	for _, f := range strings.Fields(rest) {
		if isDottedVersion(f) {
			m.Version = f
			break
		}
	}
	if m.Version == "" {
		return nvidiaModule{}, fmt.Errorf("parse NVIDIA module version: no version number: %w", ErrParse)
	}
	return m, nil
}

func isDottedVersion(s string) bool {
	if s == "" || !strings.Contains(s, ".") {
		return false
	}
	for _, p := range strings.Split(s, ".") {
		if p == "" {
			return false
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return false
			}
		}
	}
	return true
}

// parseRegistryDwords reads the RegistryDwords line of
// /proc/driver/nvidia/params: `RegistryDwords: "PeerMappingOverride=1;RmFoo=0x2"`.
// Keys are returned as written; a missing line gives an empty map.
func parseRegistryDwords(params string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(params, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != "RegistryDwords" {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		for _, kv := range strings.Split(v, ";") {
			name, val, ok := strings.Cut(kv, "=")
			name = strings.TrimSpace(name)
			if !ok || name == "" {
				continue
			}
			out[name] = strings.TrimSpace(val)
		}
	}
	return out
}

// registryTrue reports whether a registry dword value is non-zero (decimal
// or 0x hexadecimal).
func registryTrue(v string) bool {
	n, err := strconv.ParseUint(v, 0, 32)
	return err == nil && n != 0
}

// iommuCmdline is what the kernel command line says about the IOMMU.
type iommuCmdline struct {
	Params      []string // the IOMMU-related parameters, as written
	Passthrough bool     // iommu=pt or iommu.passthrough=1
	Off         bool     // iommu=off, intel_iommu=off or amd_iommu=off
	On          bool     // intel_iommu=on or amd_iommu=on (or =force)
}

// parseIOMMUCmdline picks the IOMMU parameters out of /proc/cmdline.
func parseIOMMUCmdline(cmdline string) iommuCmdline {
	var c iommuCmdline
	for _, tok := range strings.Fields(cmdline) {
		k, v, _ := strings.Cut(tok, "=")
		switch k {
		case "iommu":
			c.Params = append(c.Params, tok)
			for _, o := range strings.Split(v, ",") {
				switch o {
				case "pt":
					c.Passthrough = true
				case "off":
					c.Off = true
				case "on", "force":
					c.On = true
				}
			}
		case "iommu.passthrough":
			c.Params = append(c.Params, tok)
			c.Passthrough = v == "1" || v == "on" || v == "y"
		case "intel_iommu", "amd_iommu":
			c.Params = append(c.Params, tok)
			for _, o := range strings.Split(v, ",") {
				switch o {
				case "off":
					c.Off = true
				case "on", "force":
					c.On = true
				}
			}
		}
	}
	return c
}

// parsePortState reads a port state file ("4: ACTIVE") into its number and
// name.
func parsePortState(s string) (int, string, error) {
	num, name, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || err != nil || n < 0 || n > 255 {
		return 0, "", fmt.Errorf("parse port state %q: %w", s, ErrParse)
	}
	return n, strings.TrimSpace(name), nil
}

// rdmaCoreRelease derives the rdma-core release from the real file name of
// libibverbs: rdma-core names it libibverbs.so.1.<abi minor>.<release>.0, so
// ".../libibverbs.so.1.14.44.0" is rdma-core 44.
func rdmaCoreRelease(libPath string) (int, error) {
	base := path.Base(strings.ReplaceAll(libPath, "\\", "/"))
	_, ver, ok := strings.Cut(base, ".so.")
	parts := strings.Split(ver, ".")
	if !ok || len(parts) < 3 {
		return 0, fmt.Errorf("rdma-core release from %q: %w", base, ErrParse)
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n < 0 || n > 10000 {
		return 0, fmt.Errorf("rdma-core release from %q: %w", base, ErrParse)
	}
	return n, nil
}
