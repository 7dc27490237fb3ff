package gpurun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/gdaki/gpunetio/examples/internal/common"
)

// Main parses args for prog, runs role with Ctrl+C handling and returns the
// exit status: 0 on success (and for -h), 1 on any error, with the error and
// "Sample finished with errors" on stderr.
func Main(prog common.Program, args []string, stdout, stderr io.Writer,
	role func(ctx context.Context, cfg common.Config) error) int {
	cfg, err := common.Parse(prog, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 1
	}
	ctx, stop := common.Interrupts(context.Background(), stderr)
	defer stop()
	if err := role(ctx, cfg); err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", prog.Name, cfg.Role(), err)
		fmt.Fprintln(stderr, "Sample finished with errors")
		return 1
	}
	fmt.Fprintln(stderr, "Sample finished successfully")
	return 0
}
