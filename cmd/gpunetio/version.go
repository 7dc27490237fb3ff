package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/gdaki/gpunetio/gpunetio"
)

func runVersion(args []string, d deps, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if ok, code := parseFlags(fs, args, stderr); !ok {
		return code
	}
	v := "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
	}
	fmt.Fprintf(stdout, "gpunetio %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(stdout, "DOCA GPUNetIO API %s (0x%06x); device code %s..%s, host code %s..%s\n",
		version(gpunetio.LibraryVersion()), gpunetio.LibraryVersion(),
		version(gpunetio.MinCompatDeviceCodeVersion), version(gpunetio.Version),
		version(gpunetio.MinCompatHostCodeVersion), version(gpunetio.Version))
	mode := gpunetio.SDKMode
	if d.sdkMode != nil {
		mode = d.sdkMode
	}
	fmt.Fprintf(stdout, "mode: %s\n", mode())
	return exitOK
}

// version formats major<<16 | minor<<8 | patch as "major.minor.patch".
func version(v uint32) string { return fmt.Sprintf("%d.%d.%d", v>>16, v>>8&0xff, v&0xff) }
