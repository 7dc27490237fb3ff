package leaktest_test

import (
	"fmt"
	"io"

	"github.com/gdaki/gpunetio/gpunetio/leaktest"
	"github.com/gdaki/gpunetio/verbs"
)

// A test binary that passed (status 0) fails (status 1) while a Context is
// open, and passes again once it is closed.
func ExampleCheck() {
	ctx, err := verbs.OpenDevice("emu0")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("a Context open:", leaktest.Check(0, io.Discard))
	if err := ctx.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("all closed:", leaktest.Check(0, io.Discard))
	// Output:
	// a Context open: 1
	// all closed: 0
}
