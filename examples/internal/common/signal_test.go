package common

import (
	"bytes"
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestInterruptsFirstCancelsSecondExits(t *testing.T) {
	var out syncBuf
	exited := make(chan struct{})
	ctx, stop := interrupts(context.Background(), &out, func() { close(exited) })
	defer stop()
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGINT))
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGINT did not cancel the context")
	}
	assert.ErrorIs(t, context.Cause(ctx), ErrInterrupted)
	assert.Contains(t, out.String(), "cleaning up")
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGTERM))
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("second signal did not exit")
	}
}

func TestInterruptsStop(t *testing.T) {
	ctx, stop := interrupts(context.Background(), &syncBuf{}, func() { t.Error("exit called") })
	stop()
	stop() // idempotent
	<-ctx.Done()
	assert.ErrorIs(t, context.Cause(ctx), context.Canceled)
	assert.NotErrorIs(t, context.Cause(ctx), ErrInterrupted)
}
