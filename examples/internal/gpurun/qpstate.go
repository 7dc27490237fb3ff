package gpurun

import (
	"errors"
	"fmt"
	"time"

	"github.com/gdaki/gpunetio/gpunetio"
)

// QPState describes the device QP as the kernel left it
// (gpunetio.QP.DeviceState): the reserved, ready and announced indices of
// its send and receive queues, how far their CQs were consumed, and the
// error record. That tells a kernel stuck while posting from one waiting
// for a completion that has not come. It is meant for a kernel that did
// not finish, and gives up after timeout: the copy does not wait for the
// example's non-blocking stream, but could wait behind other work.
func (e *Env) QPState(timeout time.Duration) (string, error) {
	if e == nil || e.QP == nil {
		return "", errors.New("QP state: no QP")
	}
	qp := e.QP.GPUQP()
	type result struct {
		s   gpunetio.DeviceQPState
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := qp.DeviceState()
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return "", fmt.Errorf("QP state: %w", r.err)
		}
		return r.s.String(), nil
	case <-time.After(timeout):
		return "", fmt.Errorf("QP state: the device QP was not read within %v", timeout)
	}
}
