package common

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ErrInterrupted is the cause of the context Interrupts cancels.
var ErrInterrupted = errors.New("interrupted by a signal")

// Interrupts returns a context cancelled (cause ErrInterrupted) by the first
// SIGINT or SIGTERM, after which the program cleans up; a second signal exits
// at once with status 130. stop restores the default signal behaviour.
func Interrupts(parent context.Context, stderr io.Writer) (ctx context.Context, stop func()) {
	return interrupts(parent, stderr, func() { os.Exit(130) })
}

func interrupts(parent context.Context, stderr io.Writer, exit func()) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			fmt.Fprintf(stderr, "\n%v: cleaning up (again to abort)\n", s)
			cancel(ErrInterrupted)
		case <-done:
			return
		}
		select {
		case <-ch:
			exit()
		case <-done:
		}
	}()
	var stopped bool
	return ctx, func() {
		if stopped {
			return
		}
		stopped = true
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}
