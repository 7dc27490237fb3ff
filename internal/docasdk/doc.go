// Package docasdk loads NVIDIA's DOCA SDK at run time for SDK mode, the
// layer below verbs and gpunetio that DOCA GPUNetIO 3.0 added: with
// DOCA_SDK_LIB_PATH naming the SDK's library directory, the control path
// (GPU handle, device, UMEM, UAR, CQ, QP, AH) runs through the SDK's shared
// libraries instead of the open implementation. This package decides the
// mode, loads the libraries, and wraps every SDK entry point that the
// reference's SDK wrappers call; routing verbs and gpunetio objects through
// it is their business (see package verbs, "SDK mode"). "The reference",
// here and in this package's
// comments, is NVIDIA's DOCA GPUNetIO 3.0 host library, whose SDK mode this
// package mirrors: library names, load order, symbols and log lines.
//
// # Choosing the mode
//
// The mode is decided once per process, on the first call of this package
// (Current, Active, or any SDK call), and latched:
//
//   - DOCA_SDK_LIB_PATH unset or empty: open mode. No library is opened.
//   - Otherwise the package dlopens, from that directory, libdoca_common.so
//     and libdoca_verbs.so (RTLD_NOW|RTLD_GLOBAL) and then
//     libdoca_gpunetio.so (RTLD_NOW|RTLD_LOCAL). Each library depends on the
//     ones before it; loading them in this order lets the dynamic loader
//     satisfy those dependencies from the already loaded objects, so the
//     directory need not be on the loader's search path. It then resolves
//     the 98 mandatory entry points (Symbols lists them), each through the
//     handle of the library the reference looks it up in (dlsym searches
//     that library and its dependencies), and the two optional ones,
//     doca_verbs_qp_init_attr_set_ordering_semantic and
//     doca_verbs_qp_init_attr_get_ordering_semantic.
//   - SDK mode only if every library opens and every mandatory entry point
//     resolves. Anything less is open mode for the whole process: whatever
//     was opened is closed again, and Decision.Reason says why (dlerror, or
//     the missing symbols by name).
//   - A missing optional entry point disables only that call, which then
//     fails with ErrNoOrderingSemantic (DOCA_ERROR_NOT_SUPPORTED).
//
// The reference decides differently: it reads the variable again on every
// call and runs six independent loaders, one per object kind, so a process
// can mix SDK and open objects (for example when only libdoca_gpunetio.so
// is missing) and then reads an SDK pointer as an open object. Latching one
// decision for every object kind removes that class of defect; changing the
// variable after the first call changes nothing. Three of the reference's
// entry points are resolved but never called
// (doca_verbs_qp_init_attr_get_external_umem, ..._get_external_uar,
// ..._set_srq): they take part in the decision, as in the reference, and
// have no wrapper.
//
// # What is printed
//
// Messages go to the Logger installed with SetLogger (verbs and gpunetio
// install theirs and filter by DOCA_GPUNETIO_LOG); the texts and levels are
// the reference's. While deciding:
//
//   - WARNING "Env var DOCA_SDK_LIB_PATH not set %s. DOCA SDK is not in use"
//     (%s is "(null)" when unset, as glibc prints getenv's NULL);
//   - ERR "Failed to find <library> library <dir>/<library>
//     (DOCA_SDK_LIB_PATH=<dir>)" for the first library that does not open;
//   - ERR "Failed to get symbol <name>: <dlerror>" for every missing entry
//     point, then ERR "Failed to get all required DOCA GPUNetIO SDK
//     symbols" (GPU entry points), "... DOCA Verbs Dev SDK symbols" (device,
//     CQ, QP, AH and bridges) or "... DOCA Verbs UMEM SDK symbols" (UMEM and
//     UAR), once each, in that order;
//   - after either failure, WARNING "Env var DOCA_SDK_LIB_PATH set to <dir>,
//     but DOCA SDK libraries not found. DOCA SDK is not in use";
//   - for missing optional entry points, their ERR "Failed to get symbol"
//     lines and WARNING "The DOCA SDK installed on the system doesn't
//     provide symbols for the set/get ordering semantic".
//
// Decision.Log keeps these lines for a logger installed later and for the
// doctor. Because the mode is latched, lines the reference prints per call
// or per loader are printed once here: the "not set" and "libraries not
// found" WARNINGs (the reference prints them at every object creation) and
// the library and symbol ERRs (the reference prints them once per loader,
// up to six times). In SDK mode the per-call lines stay per call: WARNING
// "Env var DOCA_SDK_LIB_PATH set to <dir>. DOCA SDK is in use" after every
// successful creator, ERR "DOCA SDK function in <function> returned error
// <n>" for every SDK failure (<function> is the SDK function, where the
// reference names its own wrapper), and WARNING "The DOCA SDK installed on
// the system doesn't provide symbols for the set_ordering_semantic" (or
// get_...) when a missing optional entry point is called. MsgUse,
// MsgCreated, MsgAllocFailed and the Msg constants hold the lines the
// reference's public functions print, for verbs and gpunetio to use.
//
// # Handles and calls
//
// SDK objects are opaque C pointers held in one Go type per kind (GPU, Dev,
// UMEM, UAR, CQAttr, CQ, QPInitAttr, QPAttr, AHAttr, QP, VerbsContext,
// VerbsPD); the types are not convertible into one another. Every wrapper
// is named after, and documents, the SDK function it calls. rdma-core
// objects (struct ibv_pd *, struct ibv_context *) are passed as
// unsafe.Pointer. SDK enums are passed as uint32 with DOCA's values.
//
// Every call first checks that SDK mode is active and that no handle
// argument is zero; then it calls the SDK through a C function pointer.
// A failure is an *Error naming the SDK function. FromSDK says whether the
// SDK returned the Code (the reference maps that to
// DOCA_ERROR_INITIALIZATION in a creator and DOCA_ERROR_UNEXPECTED
// elsewhere, and so should the caller) or the call was refused before the
// SDK (Err is ErrNotActive, ErrNilHandle, ErrNoOrderingSemantic or
// ErrNoObject). Code uses DOCA's doca_error_t numbering; verbs converts it
// to its own public code type. Entry points that return a value instead of
// a status (the CQ and QP getters, get_send_dbr_mode, get_current_state,
// get_ordering_semantic) cannot fail once called.
//
// The wrappers neither lock the goroutine to its OS thread nor touch CUDA
// contexts: an SDK call that depends on the CUDA context current on the
// calling thread (GPU memory allocation and registration) is the caller's to
// make from a locked thread with the right context current, as for the
// open implementation. Current's Decision.String is a one-line summary of
// the mode for `gpunetio version` and the doctor.
//
// Destroy and Close clear the variable they are called on even when the
// SDK fails, as the reference releases its handle in every case; the SDK
// object's state after a failed destroy is the SDK's. Dev.ImportContext and
// Dev.ImportPD perform the reference's import sequences; the SDK offers no
// call that releases an import, so callers import once per Dev (the
// reference imports again for every CQ, QP and AH and never releases).
//
// # Building and testing
//
// Nothing links against the SDK; no SDK header is used. Building with cgo
// needs rdma-core's <infiniband/verbs.h> (for struct ibv_pd), as package
// devx does; without cgo the package builds, the mode is always open, and
// DOCA_SDK_LIB_PATH set prints the "libraries not found" lines.
//
// Two things verbs and gpunetio share through this package besides the
// calls: SetStandInPDs, which only this module's tests turn on, lets verbs
// open an SDK device on an emulated device (a stand-in struct ibv_pd that
// only the stand-in SDK accepts); VerbsGPURef, which verbs sets, lets
// gpunetio hand its SDK GPU handle to verbs' UMEM creation without either
// exposing it.
//
// The tests run against a stand-in, not the SDK: package fakesdk embeds C
// sources (fakesdk/csrc), written for these tests, of three libraries with
// the SDK's file names and every entry point this package resolves, and
// builds them; the tests of verbs and gpunetio use it too. They record each call
// with its arguments, hand out distinct handles, keep what setters store
// for the getters, and fail any function with any doca_error_t on request.
// The tests build them with the system C compiler, in variants that lack a
// library, a mandatory symbol or the optional pair, and run each mode
// decision in a fresh process. Whether a real DOCA SDK behaves as the
// stand-in does (parameter lists, ownership, which library exports what) is
// not tested here.
package docasdk
