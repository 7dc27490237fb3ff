package doctor_test

import (
	"fmt"
	"os"

	"github.com/gdaki/gpunetio/doctor"
	"github.com/gdaki/gpunetio/doctor/doctortest"
)

// Checking this host: the verdicts, and the fixes for what is not PASS.
func ExampleRun() {
	rep := doctor.Run(doctor.NewHostEnv(""), doctor.Options{Device: "mlx5_0", GPU: "0"})
	for _, r := range rep.Results {
		fmt.Printf("%-22s %-14s %s %s\n", r.Name, r.Subject, r.Verdict, r.Value)
		if r.Fix != "" {
			fmt.Println("    fix:", r.Fix)
		}
	}
	if rep.Failed() {
		fmt.Println("GPU-initiated RDMA cannot work on this host yet")
	}
}

// Checking a fake machine: a tree of /sys and /proc extracted from an
// archive, and probes that answer from its facts.json. This one has ACS
// redirection enabled on the PCIe switch between the GPU and the NIC.
func ExampleRun_fakeMachine() {
	root, err := os.MkdirTemp("", "doctor-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	if err := doctortest.Extract("testdata/acs.tree", root); err != nil {
		fmt.Println(err)
		return
	}
	facts, err := doctortest.LoadFacts(root)
	if err != nil {
		fmt.Println(err)
		return
	}
	rep := doctor.Run(facts.Env(root), doctor.Options{})
	for _, r := range rep.Find("acs") {
		fmt.Println(r.Subject, r.Verdict)
		fmt.Println("value:", r.Value)
		fmt.Println("fix:", r.Fix)
	}
	fmt.Println("failed:", rep.Failed())
	// Output:
	// mlx5_0 FAIL
	// value: 0000:81:00.0 no ACS; 0000:82:00.0 ACSCtl=0x001d (SrcValid,ReqRedir,CmpltRedir,UpstreamFwd); 0000:82:01.0 ACSCtl=0x001d (SrcValid,ReqRedir,CmpltRedir,UpstreamFwd)
	// fix: ACS redirects peer traffic to the root complex. As root, each boot: setpci -s 0000:82:00.0 ECAP_ACS+0x6.w=0000; setpci -s 0000:82:01.0 ECAP_ACS+0x6.w=0000 (or disable ACS in the BIOS).
	// failed: true
}
