package common

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gdaki/gpunetio/gpunetio"
)

// Program describes what one example accepts on its command line.
type Program struct {
	Name      string                // "put_bw"
	Kernel    string                // default kernel image file name, e.g. "put_bw_kernel.fatbin"
	ExecScope bool                  // accepts -e (put_bw)
	DBRMode   bool                  // accepts -r (write_lat)
	Handlers  []gpunetio.NICHandler // the NIC handlers -p may select
	IterMult  uint32                // -i must be a multiple of this (0: any positive value)
	MaxIters  uint32                // -i must not exceed this (0: no limit)
}

// Format is the format of the -o results file.
type Format string

// Result file formats.
const (
	FormatJSON Format = "json"
	FormatCSV  Format = "csv"
)

// Config is a parsed command line.
type Config struct {
	Device         string // -d: RDMA device name prefix ("" = the first device)
	GPU            string // -g: GPU PCIe address ("" = CUDA device 0)
	Server         string // -c: server address; empty in the server role
	ExecScope      gpunetio.ExecScope
	Handler        gpunetio.NICHandler
	Iters          uint32
	GIDIndex       uint32
	DBRMode        gpunetio.SendDBRModeExt
	Kernel         string // -k: kernel image path ("" = search build/kernels)
	Output         string // -o: results file ("" = none)
	Format         Format // format of Output
	NonInteractive bool   // -n: the server exits by itself after one client
	Port           uint16 // -port: OOB TCP port
	Timeout        time.Duration
	// Mem is where the QP's rings and the data buffers live (-m):
	// gpunetio.MemGPU (default) or gpunetio.MemCPUGPU, pinned host memory
	// mapped into the GPU, for hosts where the NIC cannot reach GPU memory.
	Mem gpunetio.MemType
}

// IsClient reports whether the process runs as the client (-c given).
func (c Config) IsClient() bool { return c.Server != "" }

// Role is "client" or "server".
func (c Config) Role() string {
	if c.IsClient() {
		return "client"
	}
	return "server"
}

// ErrUsage matches every command-line error; the programs exit with status 1
// on it. flag.ErrHelp (-h) is returned as is.
var ErrUsage = errors.New("usage error")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// Usage writes the help text of p.
func (p Program) Usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s [flags]\n", p.Name)
	fmt.Fprintf(w, "  -c <server_ip> (Client only)\n")
	fmt.Fprintf(w, "  -d <mlx5_X device name> (prefix match; emu0, emu1 for the emulated NICs)\n")
	if p.ExecScope {
		fmt.Fprintf(w, "  -e <exec scope. 0: THREAD 1: WARP (default: 0)>\n")
	}
	fmt.Fprintf(w, "  -g <GPU PCIe address> (default: CUDA device 0)\n")
	if p.IterMult > 0 {
		fmt.Fprintf(w, "  -i <number of iterations (default: %d), a multiple of %d", DefaultIters, p.IterMult)
		if p.MaxIters > 0 {
			fmt.Fprintf(w, ", at most %d", p.MaxIters)
		}
		fmt.Fprintf(w, ">\n")
	} else {
		fmt.Fprintf(w, "  -i <number of iterations (default: %d)>\n", DefaultIters)
	}
	fmt.Fprintf(w, "  -l <GID Index (default: 0)>\n")
	fmt.Fprintf(w, "  -m <memory of the QP rings and data buffers. 0: GPU 2: CPU_GPU (default: 0)>\n")
	var hs []string
	for _, h := range p.Handlers {
		hs = append(hs, fmt.Sprintf("%d: %s", uint32(h), h))
	}
	fmt.Fprintf(w, "  -p <NIC handler. %s (default: 0)>\n", strings.Join(hs, " "))
	if p.DBRMode {
		fmt.Fprintf(w, "  -r <DBREC mode external (Reliable DBREC feature). 0: VALID_DBR 1: NO_DBR_HW 2: NO_DBR_SW_EMULATED (default: 0, ConnectX-8 only)>\n")
	}
	fmt.Fprintf(w, "  -k <kernel image> (default: build/kernels/%s, searched from the working directory and the executable upwards)\n", p.Kernel)
	fmt.Fprintf(w, "  -o <file.json|file.csv> write the results as JSON or CSV\n")
	fmt.Fprintf(w, "  -format <json|csv> format of -o when the extension does not say\n")
	fmt.Fprintf(w, "  -n, --non-interactive  server: exit after the client finished instead of waiting for Ctrl+C\n")
	fmt.Fprintf(w, "  -port <n> out-of-band TCP port (default: %d)\n", DefaultOOBPort)
	fmt.Fprintf(w, "  -timeout <duration> bound on every wait: connect, exchange, kernels, client completion (default: 60s)\n")
	fmt.Fprintf(w, "  -h  this help\n")
}

// Parse parses args (without the program name) for p. On -h it writes the
// usage to stderr and returns flag.ErrHelp; on a bad flag it writes the
// message and the usage and returns an error matching ErrUsage.
func Parse(p Program, args []string, stderr io.Writer) (Config, error) {
	cfg, err := parse(p, args)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		}
		p.Usage(stderr)
	}
	return cfg, err
}

func parse(p Program, args []string) (Config, error) {
	fs := flag.NewFlagSet(p.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var (
		cfg                         Config
		scope, handler, iters, gid  string
		dbr, format, port, mem      string
		nonInteractive, nonInterLng bool
	)
	fs.StringVar(&cfg.Server, "c", "", "")
	fs.StringVar(&cfg.Device, "d", "", "")
	fs.StringVar(&cfg.GPU, "g", "", "")
	fs.StringVar(&iters, "i", strconv.Itoa(DefaultIters), "")
	fs.StringVar(&gid, "l", "0", "")
	fs.StringVar(&handler, "p", "0", "")
	fs.StringVar(&mem, "m", "0", "")
	if p.ExecScope {
		fs.StringVar(&scope, "e", "0", "")
	}
	if p.DBRMode {
		fs.StringVar(&dbr, "r", "0", "")
	}
	fs.StringVar(&cfg.Kernel, "k", "", "")
	fs.StringVar(&cfg.Output, "o", "", "")
	fs.StringVar(&format, "format", "", "")
	fs.BoolVar(&nonInteractive, "n", false, "")
	fs.BoolVar(&nonInterLng, "non-interactive", false, "")
	fs.StringVar(&port, "port", strconv.Itoa(DefaultOOBPort), "")
	fs.DurationVar(&cfg.Timeout, "timeout", 60*time.Second, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, usageErr("%v", err)
	}
	if fs.NArg() > 0 {
		return cfg, usageErr("unexpected argument %q", fs.Arg(0))
	}
	cfg.NonInteractive = nonInteractive || nonInterLng

	n, err := parseUint(iters, 32)
	if err != nil || n == 0 {
		return cfg, usageErr("-i %q: the number of iterations must be a positive integer", iters)
	}
	cfg.Iters = uint32(n)
	if p.IterMult > 0 && cfg.Iters%p.IterMult != 0 {
		return cfg, usageErr("-i %d: the number of iterations must be a multiple of %d (the CUDA threads)", cfg.Iters, p.IterMult)
	}
	if p.MaxIters > 0 && cfg.Iters > p.MaxIters {
		return cfg, usageErr("-i %d: at most %d iterations (the send queue depth; the kernel has no flow control)", cfg.Iters, p.MaxIters)
	}

	n, err = parseUint(gid, 8)
	if err != nil {
		return cfg, usageErr("-l %q: the GID index must be an integer in 0..255", gid)
	}
	cfg.GIDIndex = uint32(n)

	h, err := gpunetio.ParseNICHandler(handler)
	if err != nil {
		return cfg, usageErr("-p %q: not a NIC handler", handler)
	}
	if !containsHandler(p.Handlers, h) {
		if h == gpunetio.NICHandlerGPUSMBF {
			return cfg, usageErr("NIC handler BlueFlame not supported in this example")
		}
		return cfg, usageErr("NIC handler %s not supported in this example", h)
	}
	cfg.Handler = h

	if p.ExecScope {
		s, err := parseScope(scope)
		if err != nil {
			return cfg, err
		}
		cfg.ExecScope = s
	}
	if p.DBRMode {
		m, err := parseDBRMode(dbr)
		if err != nil {
			return cfg, err
		}
		cfg.DBRMode = m
	}

	if cfg.Mem, err = parseMem(mem); err != nil {
		return cfg, err
	}

	n, err = parseUint(port, 16)
	if err != nil || n == 0 {
		return cfg, usageErr("-port %q: not a TCP port number", port)
	}
	cfg.Port = uint16(n)
	if cfg.Timeout <= 0 {
		return cfg, usageErr("-timeout %v: must be positive", cfg.Timeout)
	}
	if cfg.Format, err = outputFormat(cfg.Output, format); err != nil {
		return cfg, err
	}
	if p.Kernel == "" {
		return cfg, usageErr("program %s has no kernel image name", p.Name)
	}
	return cfg, nil
}

func parseUint(s string, bits int) (uint64, error) {
	return strconv.ParseUint(strings.TrimSpace(s), 10, bits)
}

func containsHandler(hs []gpunetio.NICHandler, h gpunetio.NICHandler) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

func parseMem(s string) (gpunetio.MemType, error) {
	for _, m := range []gpunetio.MemType{gpunetio.MemGPU, gpunetio.MemCPUGPU} {
		if strings.TrimSpace(s) == strconv.Itoa(int(m)) || strings.EqualFold(strings.TrimSpace(s), m.String()) {
			return m, nil
		}
	}
	return 0, usageErr("-m %q: the memory type must be 0 (GPU) or 2 (CPU_GPU)", s)
}

func parseScope(s string) (gpunetio.ExecScope, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "0", "thread":
		return gpunetio.ExecScopeThread, nil
	case "1", "warp":
		return gpunetio.ExecScopeWarp, nil
	}
	return 0, usageErr("-e %q: the exec scope must be 0 (thread) or 1 (warp)", s)
}

func parseDBRMode(s string) (gpunetio.SendDBRModeExt, error) {
	for _, m := range []gpunetio.SendDBRModeExt{gpunetio.SendDBRValid, gpunetio.SendNoDBRHW, gpunetio.SendNoDBRSWEmulated} {
		if s == strconv.Itoa(int(m)) || strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return 0, usageErr("-r %q: the DBREC mode must be 0 (VALID_DBR), 1 (NO_DBR_HW) or 2 (NO_DBR_SW_EMULATED)", s)
}

func outputFormat(path, format string) (Format, error) {
	if path == "" {
		if format != "" {
			return "", usageErr("-format %q without -o", format)
		}
		return "", nil
	}
	switch f := Format(strings.ToLower(format)); f {
	case FormatJSON, FormatCSV:
		return f, nil
	case "":
	default:
		return "", usageErr("-format %q: want json or csv", format)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return FormatJSON, nil
	case ".csv":
		return FormatCSV, nil
	}
	return "", usageErr("-o %q: cannot tell the format from the extension; use .json or .csv, or -format", path)
}
