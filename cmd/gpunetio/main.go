package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gdaki/gpunetio/internal/doctor"
	"github.com/gdaki/gpunetio/internal/mlx5"
	_ "github.com/gdaki/gpunetio/internal/mlx5/devx" // real mlx5 devices
	_ "github.com/gdaki/gpunetio/internal/mlx5/emu"  // emulated devices
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// deps is what the subcommands reach outside the process; tests replace it.
type deps struct {
	// listRDMA and openRDMA are mlx5.Devices and mlx5.Open.
	listRDMA func() ([]mlx5.DeviceInfo, error)
	openRDMA func(name string) (mlx5.Device, error)
	// gpus lists the GPUs (NVML).
	gpus doctor.GPUSource
	// newEnv builds the doctor's environment for a filesystem root.
	newEnv func(root string) doctor.Env
}

func hostDeps() deps {
	return deps{
		listRDMA: mlx5.Devices,
		openRDMA: mlx5.Open,
		gpus:     doctor.NVML{},
		newEnv: func(root string) doctor.Env {
			env := doctor.NewHostEnv(root)
			env.Emulated = emulatedNames(mlx5.Devices)
			return env
		},
	}
}

// emulatedNames lists the emulated RDMA devices.
func emulatedNames(list func() ([]mlx5.DeviceInfo, error)) []string {
	ds, _ := list()
	var out []string
	for _, d := range ds {
		if d.Driver == "emu" {
			out = append(out, d.Name)
		}
	}
	return out
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
		return runVersion(args[1:], stdout, stderr)
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
