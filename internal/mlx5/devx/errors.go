package devx

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrUnavailable is matched (errors.Is) by every error that means rdma-core
// could not be used at all: a library that does not load, an entry point an
// old rdma-core lacks, or a binary built without cgo.
var ErrUnavailable = errors.New("rdma-core unavailable")

// Error is a failed rdma-core call or a call refused before it reached
// rdma-core (bad argument, closed object).
//
// errors.Is matches the errno (errors.Is(err, syscall.EINVAL)) and, where
// set, the wrapped cause (mlx5.ErrNoDevice, ErrUnavailable).
type Error struct {
	Op     string        // the C call or the Go method: "ibv_alloc_pd", "RegMR"
	Errno  syscall.Errno // the cause; 0 only when Err says it all
	Detail string        // what was asked for and, where useful, a hint
	Err    error         // an additional cause, or nil
}

func (e *Error) Error() string {
	msg := "devx: " + e.Op
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Errno != 0 {
		msg += ": " + ErrnoString(e.Errno)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the errno and the additional cause.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Errno != 0 {
		errs = append(errs, e.Errno)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func newError(op string, errno syscall.Errno, format string, args ...any) *Error {
	return &Error{Op: op, Errno: errno, Detail: fmt.Sprintf(format, args...)}
}

// errnoNames are the errno values rdma-core and the kernel's DevX paths
// return, by their C names.
var errnoNames = map[syscall.Errno]string{
	syscall.EPERM:           "EPERM",
	syscall.ENOENT:          "ENOENT",
	syscall.EINTR:           "EINTR",
	syscall.EIO:             "EIO",
	syscall.ENXIO:           "ENXIO",
	syscall.E2BIG:           "E2BIG",
	syscall.EBADF:           "EBADF",
	syscall.EAGAIN:          "EAGAIN",
	syscall.ENOMEM:          "ENOMEM",
	syscall.EACCES:          "EACCES",
	syscall.EFAULT:          "EFAULT",
	syscall.EBUSY:           "EBUSY",
	syscall.EEXIST:          "EEXIST",
	syscall.ENODEV:          "ENODEV",
	syscall.EINVAL:          "EINVAL",
	syscall.ENFILE:          "ENFILE",
	syscall.EMFILE:          "EMFILE",
	syscall.ENOSPC:          "ENOSPC",
	syscall.ERANGE:          "ERANGE",
	syscall.ENOSYS:          "ENOSYS",
	syscall.ENODATA:         "ENODATA",
	syscall.EOVERFLOW:       "EOVERFLOW",
	syscall.EPROTONOSUPPORT: "EPROTONOSUPPORT",
	syscall.EOPNOTSUPP:      "EOPNOTSUPP",
	syscall.ETIMEDOUT:       "ETIMEDOUT",
	syscall.EREMOTEIO:       "EREMOTEIO",
}

// ErrnoString renders an errno by name and message: "EINVAL (invalid
// argument)". An errno without a known name prints as "errno N (message)".
func ErrnoString(e syscall.Errno) string {
	if n, ok := errnoNames[e]; ok {
		return fmt.Sprintf("%s (%s)", n, e.Error())
	}
	return fmt.Sprintf("errno %d (%s)", uintptr(e), e.Error())
}

// LibraryError says that rdma-core cannot be used: a library did not load, or
// lacks an entry point this package needs. It matches ErrUnavailable.
type LibraryError struct {
	Library string // the name handed to dlopen: "libibverbs.so.1"
	Env     string // the variable that overrides the name: "GDAKI_LIBIBVERBS"
	Symbol  string // "name@VERSION" of a missing required entry point, or ""
	Since   int    // the first rdma-core release that has Symbol (0: all)
	Reason  string // dlerror() text, or why the package was built without it
	Err     error  // the loader's *dl.Error, when there is one
}

func (e *LibraryError) Error() string {
	if e.Symbol != "" && e.Since == 0 {
		return fmt.Sprintf("rdma-core unavailable: %s lacks %s, which every rdma-core release has (is it libibverbs?): %s",
			e.Library, e.Symbol, e.Reason)
	}
	if e.Symbol != "" {
		return fmt.Sprintf("rdma-core unavailable: %s lacks %s (needs rdma-core v%d or newer): %s",
			e.Library, e.Symbol, e.Since, e.Reason)
	}
	msg := fmt.Sprintf("rdma-core unavailable: cannot load %s: %s", e.Library, e.Reason)
	if e.Env != "" {
		msg += fmt.Sprintf(" (install rdma-core's libibverbs and mlx5 provider, e.g. Debian/Ubuntu "+
			"packages libibverbs1 and ibverbs-providers, or set %s to the library's path)", e.Env)
	}
	return msg
}

// Is matches ErrUnavailable.
func (e *LibraryError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the dynamic loader's error (a *dl.Error), or nil.
func (e *LibraryError) Unwrap() error { return e.Err }

// missingSymbol is the error of a call whose optional entry point the loaded
// rdma-core lacks.
func missingSymbol(op, symbol, version, library string, since int) *Error {
	return &Error{
		Op:     op,
		Errno:  syscall.ENOTSUP,
		Detail: fmt.Sprintf("%s lacks %s@%s (added in rdma-core v%d)", library, symbol, version, since),
	}
}
