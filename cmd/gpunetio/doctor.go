package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/gdaki/gpunetio/doctor"
)

func runDoctor(args []string, d deps, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	var opt doctor.Options
	fs.StringVar(&opt.Device, "d", "", "RDMA device to check (default: every mlx5 device)")
	fs.StringVar(&opt.GPU, "g", "", "GPU index or PCI bus id (default: the GPU closest to the NIC)")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.Uint64Var(&opt.BAR1MiB, "bar1-mib", doctor.DefaultBAR1MiB, "GPU BAR1 space the application needs, in MiB")
	root := fs.String("root", "", "read /sys and /proc below this directory")
	if ok, code := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if opt.BAR1MiB == 0 {
		fmt.Fprintln(stderr, "gpunetio doctor: --bar1-mib must be at least 1")
		return exitUsage
	}
	rep := doctor.Run(d.newEnv(*root), opt)
	code := exitOK
	if rep.Failed() {
		code = exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			doctor.Report
			Failed bool `json:"failed"`
		}{rep, rep.Failed()}); err != nil {
			fmt.Fprintln(stderr, "gpunetio doctor:", err)
			return exitFail
		}
		return code
	}
	printReport(stdout, rep)
	return code
}

func printReport(w io.Writer, rep doctor.Report) {
	t := newTable(w, "CHECK", "SUBJECT", "VERDICT", "VALUE")
	var fixes []doctor.Result
	for _, r := range rep.Results {
		t.row(r.Name, orDash(r.Subject), r.Verdict.String(), r.Value)
		if r.Fix != "" {
			fixes = append(fixes, r)
		}
	}
	t.flush()
	if len(fixes) > 0 {
		fmt.Fprintln(w, "\nFixes")
		for _, r := range fixes {
			subj := ""
			if r.Subject != "" {
				subj = " (" + r.Subject + ")"
			}
			fmt.Fprintf(w, "  %s %s%s: %s\n", r.Verdict, r.Name, subj, r.Fix)
		}
	}
	fmt.Fprintf(w, "\n%d PASS, %d WARN, %d FAIL, %d SKIP\n",
		rep.Count(doctor.Pass), rep.Count(doctor.Warn), rep.Count(doctor.Fail), rep.Count(doctor.Skip))
}
