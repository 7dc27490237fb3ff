package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if ok, code := parseFlags(fs, args, stderr); !ok {
		return code
	}
	v := "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
	}
	fmt.Fprintf(stdout, "gpunetio %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
