package verbs

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/doclog"
)

// Mode says which implementation runs the control path of this process
// (enum doca_verbs_lib_type of DOCA GPUNetIO 3.0): this module's open
// implementation, or NVIDIA's DOCA SDK, loaded at run time.
type Mode int

// The modes, with DOCA's values.
const (
	ModeOpen Mode = Mode(docasdk.Open)
	ModeSDK  Mode = Mode(docasdk.SDK)
)

func (m Mode) String() string { return docasdk.Mode(m).String() }

// ModeInfo is the process's mode decision and how it was taken (see the
// package documentation, "SDK mode").
type ModeInfo struct {
	Mode Mode
	// EnvSet says whether DOCA_SDK_LIB_PATH was set; Env is its value, as
	// read once, at the decision.
	EnvSet bool
	Env    string
	// Dir is the SDK library directory in SDK mode; Libraries the files
	// loaded, in load order.
	Dir       string
	Libraries []string
	// Reason says why the process runs in open mode ("" in SDK mode).
	Reason string
	// SetOrderingSemantic and GetOrderingSemantic say whether the SDK
	// provides the QP ordering semantic's setter and getter (SDK mode).
	SetOrderingSemantic bool
	GetOrderingSemantic bool
	// Log holds the lines printed while deciding ("WARNING: Env var ...").
	Log []string
}

// String is a one-line summary: "SDK (libraries from /opt/...)" or
// "open (DOCA_SDK_LIB_PATH is not set)".
func (m ModeInfo) String() string { return m.decision().String() }

func (m ModeInfo) decision() docasdk.Decision {
	return docasdk.Decision{Mode: docasdk.Mode(m.Mode), EnvSet: m.EnvSet, Env: m.Env, Dir: m.Dir,
		Reason: m.Reason, SetOrderingSemantic: m.SetOrderingSemantic, GetOrderingSemantic: m.GetOrderingSemantic}
}

// EnvSDKLibPath names the directory of the DOCA SDK libraries. Set and not
// empty when the process first creates a verbs or gpunetio object (or calls
// SDKMode), it asks for SDK mode.
const EnvSDKLibPath = docasdk.EnvLibPath

// SDKMode reports the process's mode, deciding it on the first call: SDK
// mode when DOCA_SDK_LIB_PATH names a directory from which
// libdoca_common.so, libdoca_verbs.so and libdoca_gpunetio.so load with
// every entry point the SDK mode needs; open mode otherwise. The decision
// is taken once per process and never changes.
func SDKMode() ModeInfo {
	d := docasdk.Current()
	m := ModeInfo{Mode: Mode(d.Mode), EnvSet: d.EnvSet, Env: d.Env, Dir: d.Dir,
		Libraries: d.Libraries, Reason: d.Reason,
		SetOrderingSemantic: d.SetOrderingSemantic, GetOrderingSemantic: d.GetOrderingSemantic}
	for _, l := range d.Log {
		m.Log = append(m.Log, l.String())
	}
	return m
}

// currentMode is the process's mode (deciding it if needed).
func currentMode() Mode {
	if docasdk.Active() {
		return ModeSDK
	}
	return ModeOpen
}

// SDKError is a DOCA SDK function that failed in SDK mode, found with
// errors.As in the chain of the *Error a call returned: the SDK function
// and the doca_error_t it returned. The *Error around it carries the code
// DOCA GPUNetIO gives such failures: ErrInitialization when an object
// could not be created, ErrUnexpected for any other call.
type SDKError struct {
	Func string // e.g. "doca_verbs_qp_modify"
	Code Code   // what the SDK returned
}

func (e *SDKError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("the DOCA SDK's %s returned %s (%d)", e.Func, e.Code.Name(), int32(e.Code))
}

// sdkErr turns an error of package docasdk into this package's: an SDK
// failure becomes ErrInitialization in a creator (creator true) and
// ErrUnexpected elsewhere, with an *SDKError as the cause, after the INFO
// line DOCA prints; a call refused before it reached the SDK keeps the code
// docasdk gave it (ErrInvalidValue for a missing handle, ErrNotSupported
// for a missing optional entry point).
func sdkErr(op string, creator bool, err error, format string, args ...any) *Error {
	var e *docasdk.Error
	if !errors.As(err, &e) {
		return wrapErr(op, ErrUnexpected, err, format, args...)
	}
	if e.FromSDK {
		logPrint(logInfo, docasdk.MsgSDKReturnedError)
		code := ErrUnexpected
		if creator {
			code = ErrInitialization
		}
		return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, args...), Err: &SDKError{Func: e.Func, Code: Code(e.Code)}}
	}
	// A refusal: the text says why; the docasdk type stays out of the chain.
	return &Error{Op: op, Code: Code(e.Code), Msg: fmt.Sprintf(format, args...), Err: errors.New(e.Error())}
}

// sdkOnly is the error of an SDK-only feature used in open mode.
func sdkOnly(op, what string) *Error {
	return newErr(op, ErrNotSupported, "%s needs SDK mode (DOCA_SDK_LIB_PATH naming a DOCA SDK); this process runs in open mode: %s",
		what, docasdk.Current().Reason)
}

// openOnly is the error of an open-mode-only entry point used in SDK mode.
func openOnly(op, what string) *Error {
	return newErr(op, ErrNotSupported, "%s is not available in SDK mode (DOCA_SDK_LIB_PATH=%s)", what, docasdk.Current().Dir)
}

// mixed is the error of objects of the two modes used together.
func mixed(op, what string, m Mode) *Error {
	return newErr(op, ErrInvalidValue, "%s is an %v-mode object, but this process runs in %v mode: objects of the two modes do not mix", what, m, currentMode())
}

// The log levels this package prints at.
const (
	logErr     = doclog.Err
	logWarning = doclog.Warning
	logInfo    = doclog.Info
)

func logPrint(l int32, msg string) { doclog.Print(l, msg) }

// logUse prints DOCA's "Use DOCA <object> SDK|open" line of a creator.
func logUse(o docasdk.Object, m Mode) { logPrint(logInfo, docasdk.MsgUse(o, docasdk.Mode(m))) }

// logCreated prints DOCA's "<name>_open=%p was created" line.
func logCreated(o docasdk.Object, p unsafe.Pointer) {
	if msg, ok := docasdk.MsgCreated(o, uintptr(p)); ok {
		logPrint(logInfo, msg)
	}
}

// logAllocFailed prints DOCA's "<name>_open allocation failed" line.
func logAllocFailed(o docasdk.Object) { logPrint(logErr, docasdk.MsgAllocFailed(o)) }

// initFailed turns a failure while building an object into DOCA 3.0's
// code for it, ErrInitialization, keeping the cause (so errors.Is still
// finds the specific code, ErrInvalidValue or ErrDriver, in the chain). A
// failure that already is ErrInitialization, or a lifetime error of this
// package (ErrBadState, ErrInUse), is returned as it is.
func initFailed(op string, o docasdk.Object, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && (e.Code == ErrInitialization || e.Code == ErrBadState || e.Code == ErrInUse) {
		return err
	}
	logAllocFailed(o)
	if errors.As(err, &e) && e.Op == op {
		// One message: the inner error's text under the 3.0 code, the
		// inner code after it.
		return &Error{Op: op, Code: ErrInitialization, Msg: e.Msg, Err: initCause{e}}
	}
	return &Error{Op: op, Code: ErrInitialization, Msg: "construction failed", Err: err}
}

// initCause is the specific error under an ErrInitialization: it prints
// the code and cause of the inner *Error (whose operation and message the
// outer one repeats) and unwraps to it.
type initCause struct{ e *Error }

func (c initCause) Error() string {
	s := c.e.Code.Name()
	if c.e.Err != nil {
		s += ": " + c.e.Err.Error()
	}
	return s
}

func (c initCause) Unwrap() error { return c.e }

// GPURef is the GPU a range of GPU memory belongs to: the gpu argument
// doca_verbs_umem_create takes in DOCA GPUNetIO 3.0, carried in
// Dmabuf.GPU. Package gpunetio makes it (gpunetio.GPU.VerbsRef) and its
// high-level QPs pass it. Open mode does not use it; in SDK mode a
// registration through a dma-buf goes through the GPU's SDK handle
// (doca_umem_gpu_create) and needs it.
type GPURef struct {
	name string
	sdk  docasdk.GPU
}

// String names the GPU.
func (r *GPURef) String() string {
	if r == nil {
		return "<no GPU>"
	}
	return r.name
}

func init() {
	docasdk.VerbsGPURef = func(name string, g docasdk.GPU) any { return &GPURef{name: name, sdk: g} }
}
