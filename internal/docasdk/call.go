package docasdk

import (
	"fmt"
	"unsafe"
)

// notBound is what a trampoline returns when its entry point is not bound
// (shim.h's GDS_NOT_BOUND; the checks below make it unreachable).
const notBound = -1

// arg is a handle or pointer argument, named for the error when it is nil.
type arg struct {
	name string
	p    unsafe.Pointer
}

// begin checks that SDK function s may be called with args: SDK mode is
// active, the entry point exists and no handle argument is nil.
func begin(s sym, args ...arg) error {
	if !Active() {
		return refused(s, CodeNotSupported, fmt.Errorf("%w (%s)", ErrNotActive, decided.Reason))
	}
	for _, a := range args {
		if a.p == nil {
			return refused(s, CodeInvalidValue, fmt.Errorf("%w: argument %s", ErrNilHandle, a.name))
		}
	}
	switch {
	case s == symQPInitAttrSetOrderingSemantic && !decided.SetOrderingSemantic:
		logf(LevelWarning, fmtNoOrderingCall, "set_ordering_semantic")
		return refused(s, CodeNotSupported, ErrNoOrderingSemantic)
	case s == symQPInitAttrGetOrderingSemantic && !decided.GetOrderingSemantic:
		logf(LevelWarning, fmtNoOrderingCall, "get_ordering_semantic")
		return refused(s, CodeNotSupported, ErrNoOrderingSemantic)
	}
	return nil
}

// status turns what SDK function s returned into an error, printing the
// reference's ERR line for an SDK failure.
func status(s sym, rc int32) error {
	switch rc {
	case int32(CodeSuccess):
		return nil
	case notBound:
		return refused(s, CodeNotSupported, ErrNotActive)
	}
	logf(LevelErr, fmtSDKError, s.String(), rc)
	return &Error{Func: s.String(), Code: Code(rc), FromSDK: true}
}

// made finishes a creator that returned DOCA_SUCCESS: the object must exist,
// and the reference's "in use" line is printed.
func made(s sym, p unsafe.Pointer) error {
	if p == nil {
		return refused(s, CodeUnexpected, ErrNoObject)
	}
	logf(LevelWarning, fmtEnvInUse, decided.Env)
	return nil
}

// create runs a creator call through call and returns the new object.
func create(s sym, call func(out *unsafe.Pointer) int32, args ...arg) (unsafe.Pointer, error) {
	if err := begin(s, args...); err != nil {
		return nil, err
	}
	var out unsafe.Pointer
	if err := status(s, call(&out)); err != nil {
		return nil, err
	}
	if err := made(s, out); err != nil {
		return nil, err
	}
	return out, nil
}

// destroy runs a destroyer on *h and clears *h whatever the outcome: the
// reference releases its handle even when the SDK's destroy fails.
func destroy(s sym, name string, h *unsafe.Pointer) error {
	if err := begin(s, arg{name, *h}); err != nil {
		return err
	}
	err := status(s, tP(s, *h))
	*h = nil
	return err
}

// The setter and getter shapes. Each checks, calls and maps the status.

func setP(s sym, a arg, b arg) error {
	if err := begin(s, a, b); err != nil {
		return err
	}
	return status(s, tPP(s, a.p, b.p))
}

func setAddr(s sym, a arg, v uintptr) error {
	if err := begin(s, a); err != nil {
		return err
	}
	return status(s, tPAddr(s, a.p, v))
}

func setPU64(s sym, a arg, b arg, v uint64) error {
	if err := begin(s, a, b); err != nil {
		return err
	}
	return status(s, tPPU64(s, a.p, b.p, v))
}

func setInt(s sym, a arg, v int32) error {
	if err := begin(s, a); err != nil {
		return err
	}
	return status(s, tPInt(s, a.p, v))
}

func setBool(s sym, a arg, v bool) error {
	return setInt(s, a, boolInt(v))
}

func setU8(s sym, a arg, v uint8) error {
	if err := begin(s, a); err != nil {
		return err
	}
	return status(s, tPU8(s, a.p, v))
}

func setU8Bool(s sym, a arg, v bool) error {
	return setU8(s, a, uint8(boolInt(v)))
}

func setU16(s sym, a arg, v uint16) error {
	if err := begin(s, a); err != nil {
		return err
	}
	return status(s, tPU16(s, a.p, v))
}

func setU32(s sym, a arg, v uint32) error {
	if err := begin(s, a); err != nil {
		return err
	}
	return status(s, tPU32(s, a.p, v))
}

func getU32(s sym, a arg) (uint32, error) {
	if err := begin(s, a); err != nil {
		return 0, err
	}
	var v uint32
	if err := status(s, tPU32Out(s, a.p, &v)); err != nil {
		return 0, err
	}
	return v, nil
}

func getAddr(s sym, a arg) (uintptr, error) {
	if err := begin(s, a); err != nil {
		return 0, err
	}
	var v uintptr
	if err := status(s, tPAddrOut(s, a.p, &v)); err != nil {
		return 0, err
	}
	return v, nil
}

// The entry points that return a value instead of a status cannot fail
// once called.

func valueEnum(s sym, a arg) (uint32, error) {
	if err := begin(s, a); err != nil {
		return 0, err
	}
	return uint32(tEnumOf(s, a.p)), nil
}

func valueU32(s sym, a arg) (uint32, error) {
	if err := begin(s, a); err != nil {
		return 0, err
	}
	return tU32Of(s, a.p), nil
}

func valueAddr(s sym, a arg) (uintptr, error) {
	if err := begin(s, a); err != nil {
		return 0, err
	}
	return tAddrOf(s, a.p), nil
}

func boolInt(v bool) int32 {
	if v {
		return 1
	}
	return 0
}
