package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gdaki/gpunetio/doctor"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// deps is what the subcommands reach outside the process; tests replace it.
type deps struct {
	// listRDMA lists the RDMA devices (verbs.Devices: real mlx5 devices,
	// then the emulated ones).
	listRDMA func() ([]verbs.DeviceInfo, error)
	// openRDMA opens one of them for devices to read.
	openRDMA func(name string) (rdmaHandle, error)
	// gpus lists the GPUs (NVML).
	gpus doctor.GPUSource
	// newEnv builds the doctor's environment for a filesystem root.
	newEnv func(root string) doctor.Env
	// sdkMode reports the DOCA SDK mode (gpunetio.SDKMode).
	sdkMode func() gpunetio.ModeInfo
}

func hostDeps() deps {
	return deps{
		listRDMA: verbs.Devices,
		openRDMA: openVerbs,
		gpus:     doctor.NVML{},
		newEnv:   doctor.NewHostEnv,
		sdkMode:  gpunetio.SDKMode,
	}
}

func main() {
	os.Exit(run(os.Args[1:], hostDeps(), os.Stdout, os.Stderr))
}

const usage = `usage:
  gpunetio devices [--json]
  gpunetio doctor [-d DEV] [-g GPU] [--json] [--bar1-mib N] [--root DIR]
  gpunetio version
`

// run is the whole command: it parses args, runs one subcommand and returns
// the exit code.
func run(args []string, d deps, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "devices":
		return runDevices(args[1:], d, stdout, stderr)
	case "doctor":
		return runDoctor(args[1:], d, stdout, stderr)
	case "version":
		return runVersion(args[1:], d, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "gpunetio: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

// parseFlags parses a subcommand's flags; extra positional arguments are a
// usage error.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (ok bool, code int) {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, exitOK
		}
		return false, exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gpunetio %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return false, exitUsage
	}
	return true, exitOK
}
