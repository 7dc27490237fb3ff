package docasdk

//go:generate go run ../enumgen

import (
	"fmt"
	"strconv"
	"sync/atomic"
)

// Level is a syslog-numbered log level, the numbering DOCA_GPUNETIO_LOG uses.
// This package uses three of them.
type Level int

// The levels of this package's messages.
const (
	LevelErr     Level = 3
	LevelWarning Level = 4
	LevelInfo    Level = 6
)

// Message is one log line: its level and text (no trailing newline).
type Message struct {
	Level Level
	Text  string
}

// String is "LEVEL: text".
func (m Message) String() string { return m.Level.String() + ": " + m.Text }

// Logger receives this package's messages. Filtering by level (for example
// by DOCA_GPUNETIO_LOG) is the logger's business; every message is passed.
type Logger func(level Level, msg string)

var logger atomic.Pointer[Logger]

// SetLogger installs the function that receives this package's messages;
// nil discards them. Install it before the first call of this package to
// see the lines printed while the mode is decided (Decision.Log keeps them
// too). It may be called from any goroutine.
func SetLogger(l Logger) {
	if l == nil {
		logger.Store(nil)
		return
	}
	logger.Store(&l)
}

func logf(level Level, format string, args ...any) {
	emit(level, fmt.Sprintf(format, args...))
}

func emit(level Level, msg string) {
	if l := logger.Load(); l != nil {
		(*l)(level, msg)
	}
}

// The reference's texts. The format strings are the reference's, except
// that a trailing "\n" some of them carry is dropped (a Logger receives
// lines).
const (
	fmtEnvNotSet      = "Env var " + EnvLibPath + " not set %s. DOCA SDK is not in use"
	fmtEnvNotFound    = "Env var " + EnvLibPath + " set to %s, but DOCA SDK libraries not found. DOCA SDK is not in use"
	fmtEnvInUse       = "Env var " + EnvLibPath + " set to %s. DOCA SDK is in use"
	fmtLibNotFound    = "Failed to find %s library %s (" + EnvLibPath + "=%s)"
	fmtSymbolMissing  = "Failed to get symbol %s: %s"
	fmtSDKError       = "DOCA SDK function in %s returned error %d"
	msgNoOrderingPair = "The DOCA SDK installed on the system doesn't provide symbols for the set/get ordering semantic"
	fmtNoOrderingCall = "The DOCA SDK installed on the system doesn't provide symbols for the %s"
)

// groupMissing is the summary line of a loader group with a missing symbol.
var groupMissing = [groupCount]string{
	groupGPUNetIO:  "Failed to get all required DOCA GPUNetIO SDK symbols",
	groupVerbsDev:  "Failed to get all required DOCA Verbs Dev SDK symbols",
	groupVerbsUMEM: "Failed to get all required DOCA Verbs UMEM SDK symbols",
}

// Object is a kind of object that the verbs and gpunetio creators make in
// either mode; it names the reference's per-object log lines, which those
// packages print (MsgUse, MsgCreated, MsgAllocFailed).
type Object int

// The objects, with the names the reference's lines give them.
const (
	ObjGPU        Object = iota // "GPUNetIO"
	ObjDev                      // "Verbs Dev"
	ObjUMEM                     // "Verbs UMEM"
	ObjUAR                      // "Verbs UAR"
	ObjCQAttr                   // "Verbs CQ Attr"
	ObjCQ                       // "Verbs CQ"
	ObjQPInitAttr               // "Verbs QP Init Attr"
	ObjQPAttr                   // "Verbs QP Attr"
	ObjAHAttr                   // "Verbs AH Attr"
	ObjQP                       // "Verbs qp"
	objCount
)

var objectNames = [objCount]struct{ use, open string }{
	ObjGPU:        {"GPUNetIO", "doca_gpu_open"},
	ObjDev:        {"Verbs Dev", "doca_verbs_dev_open"},
	ObjUMEM:       {"Verbs UMEM", "doca_verbs_umem_open"},
	ObjUAR:        {"Verbs UAR", "doca_verbs_uar_open"},
	ObjCQAttr:     {"Verbs CQ Attr", "doca_verbs_cq_attr_open"},
	ObjCQ:         {"Verbs CQ", "doca_verbs_cq_open"},
	ObjQPInitAttr: {"Verbs QP Init Attr", "doca_verbs_qp_init_attr_open"},
	ObjQPAttr:     {"Verbs QP Attr", "doca_verbs_qp_attr_open"},
	ObjAHAttr:     {"Verbs AH Attr", "doca_verbs_verbs_ah_open"},
	ObjQP:         {"Verbs qp", "doca_verbs_qp_open"},
}

func (o Object) valid() bool { return o >= 0 && o < objCount }

// Lines the public creators print (the reference's texts and levels).
const (
	// MsgSDKReturnedError (INFO): a public function saw an SDK failure.
	MsgSDKReturnedError = "DOCA SDK function returned an error"
	// MsgSetOrderingUnsupportedSDK and MsgGetOrderingUnsupportedSDK (INFO):
	// SDK mode, but the SDK lacks the entry point.
	MsgSetOrderingUnsupportedSDK = "DOCA SDK installation doesn't support QP init attribute setter set_ordering_semantic"
	MsgGetOrderingUnsupportedSDK = "DOCA SDK installation doesn't support QP init attribute getter get_ordering_semantic"
	// MsgSetOrderingUnsupportedOpen and MsgGetOrderingUnsupportedOpen
	// (INFO): the ordering semantic in open mode.
	MsgSetOrderingUnsupportedOpen = "QP init attribute setter set_ordering_semantic not supported in open mode."
	MsgGetOrderingUnsupportedOpen = "QP init attribute getter get_ordering_semantic not supported in open mode."
)

// MsgUse is the INFO line a creator prints once it knows which
// implementation builds the object: "Use DOCA Verbs CQ SDK", "Use DOCA
// GPUNetIO open".
func MsgUse(o Object, m Mode) string {
	if !o.valid() {
		return ""
	}
	impl := "open"
	if m == SDK {
		impl = "SDK"
	}
	return "Use DOCA " + objectNames[o].use + " " + impl
}

// MsgCreated is the INFO line an open-mode creator prints with the address
// of the new object, formatted as C's %p: "doca_verbs_cq_open=0x1f2e3d4c was
// created". The GPU handle has no such line (ok is false).
func MsgCreated(o Object, addr uintptr) (msg string, ok bool) {
	if !o.valid() || o == ObjGPU {
		return "", false
	}
	return objectNames[o].open + "=" + formatP(addr) + " was created", true
}

// MsgAllocFailed is the ERR line an open-mode creator prints when the open
// object cannot be built.
func MsgAllocFailed(o Object) string {
	switch {
	case !o.valid():
		return ""
	case o == ObjGPU:
		return "error in doca_gpu_create: failed to allocate memory for doca_gpu_open"
	}
	return objectNames[o].open + " allocation failed"
}

// formatP formats an address as glibc's printf %p does.
func formatP(addr uintptr) string {
	if addr == 0 {
		return "(nil)"
	}
	return "0x" + strconv.FormatUint(uint64(addr), 16)
}
