package gpunetio

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Service pacing: after a pass that progressed nothing, spin this many
// passes, then sleep from minIdleSleep doubling up to maxIdleSleep, so an
// idle service does not hold a core.
const (
	serviceSpins = 128
	minIdleSleep = 50 * time.Microsecond
	maxIdleSleep = time.Millisecond
)

// Service progresses the CPU-assisted QPs it monitors on one goroutine
// locked to its OS thread (doca_gpu_verbs_service_t). Each round progresses
// every QP until none progressed, then backs off. Monitor and Unmonitor may
// be called while it runs; Close stops and joins it.
type Service struct {
	mu      sync.Mutex
	set     map[*QP]struct{}
	snap    atomic.Pointer[[]*QP]
	running atomic.Bool
	stop    chan struct{}
	done    chan struct{}
	wake    chan struct{}
	rounds  atomic.Uint64
}

// NewService starts a service with no QPs (doca_gpu_verbs_create_service).
func NewService() (*Service, error) {
	s := &Service{set: map[*QP]struct{}{}, stop: make(chan struct{}), done: make(chan struct{}), wake: make(chan struct{}, 1)}
	empty := []*QP{}
	s.snap.Store(&empty)
	s.running.Store(true)
	go s.loop()
	track(s, "Service", fmt.Sprintf("service %p", s))
	return s, nil
}

// made refuses a nil Service and a zero value (one NewService did not
// return).
func (s *Service) made(op string) error {
	if s == nil {
		return newErr(op, ErrInvalidValue, "nil service")
	}
	if s.stop == nil {
		return newErr(op, ErrInvalidValue, "Service is a zero value, not one made by NewService")
	}
	return nil
}

func (s *Service) loop() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	idle, sleep := 0, minIdleSleep
	for s.running.Load() {
		any := false
		for {
			progressed := false
			for _, q := range *s.snap.Load() {
				if p, _ := q.ProgressProxy(); p {
					progressed = true
				}
			}
			s.rounds.Add(1)
			if !progressed {
				break
			}
			any = true
		}
		if any {
			idle, sleep = 0, minIdleSleep
			continue
		}
		if idle++; idle < serviceSpins {
			runtime.Gosched()
			continue
		}
		timer.Reset(sleep)
		select {
		case <-s.stop:
			return
		case <-s.wake:
			if !timer.Stop() {
				<-timer.C
			}
			idle, sleep = 0, minIdleSleep
		case <-timer.C:
			if sleep *= 2; sleep > maxIdleSleep {
				sleep = maxIdleSleep
			}
		}
	}
}

func (s *Service) publish() {
	l := make([]*QP, 0, len(s.set))
	for q := range s.set {
		l = append(l, q)
	}
	s.snap.Store(&l)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// lockFor checks s and qp for the call op and locks s.mu; the caller
// unlocks it.
func (s *Service) lockFor(op string, qp *QP) error {
	if err := s.made(op); err != nil {
		return err
	}
	if err := qp.made(op); err != nil {
		return err
	}
	s.mu.Lock()
	return nil
}

// Monitor adds qp (doca_gpu_verbs_service_monitor_qp); adding it twice is
// harmless. QPs that need no CPU helper are accepted and ignored, as in
// DOCA. A monitored QP cannot be unexported (ErrInUse) until it is
// unmonitored or the service is closed.
func (s *Service) Monitor(qp *QP) error {
	const op = "doca_gpu_verbs_service_monitor_qp"
	if err := s.lockFor(op, qp); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if !s.running.Load() {
		return newErr(op, ErrBadState, "service is closed")
	}
	if _, ok := s.set[qp]; ok {
		return nil
	}
	qp.mu.Lock()
	if qp.closed {
		qp.mu.Unlock()
		return newErr(op, ErrBadState, "QP 0x%x is unexported", qp.qpn)
	}
	qp.monitor++
	qp.mu.Unlock()
	s.set[qp] = struct{}{}
	s.publish()
	return nil
}

// Unmonitor removes qp (a Go addition); once it returns the service no
// longer touches qp. ErrNotFound if it was not monitored.
func (s *Service) Unmonitor(qp *QP) error {
	const op = "Service.Unmonitor"
	if err := s.lockFor(op, qp); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.set[qp]; !ok {
		return newErr(op, ErrNotFound, "QP 0x%x is not monitored", qp.qpn)
	}
	delete(s.set, qp)
	s.publish()
	// The loop may still hold the old snapshot: wait for a round to end.
	// ProgressProxy on an unmonitored but still exported QP is harmless, so
	// waiting only protects a following unexport.
	if s.running.Load() {
		start := s.rounds.Load()
		deadline := time.Now().Add(time.Second)
		for s.rounds.Load() < start+2 && time.Now().Before(deadline) {
			select {
			case s.wake <- struct{}{}:
			default:
			}
			time.Sleep(10 * time.Microsecond)
		}
	}
	qp.mu.Lock()
	qp.monitor--
	qp.mu.Unlock()
	return nil
}

// Close stops the goroutine, waits for it (doca_gpu_verbs_destroy_service)
// and releases the monitored QPs. A second Close returns nil.
func (s *Service) Close() error {
	const op = "doca_gpu_verbs_destroy_service"
	if err := s.made(op); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running.Swap(false) {
		return nil
	}
	close(s.stop)
	<-s.done
	for q := range s.set {
		q.mu.Lock()
		q.monitor--
		q.mu.Unlock()
	}
	s.set = map[*QP]struct{}{}
	empty := []*QP{}
	s.snap.Store(&empty)
	untrack(s)
	return nil
}
