// Package dl opens shared libraries at run time and resolves their symbols:
// the one dynamic loader of this module. Nothing in gpunetio links against
// libibverbs, libmlx5, libcuda, libnvrtc, libgdrapi or the DOCA SDK; each
// binding opens its library through Open, resolves its entry points with
// Lookup (or LookupVersion for versioned symbols), and hands the addresses
// to its C shim, which keeps a typed function-pointer table and calls
// through it. The shims never call dlopen or dlsym themselves.
//
// # Flags
//
// Open takes RTLD_* style flags. Now|Local is what every binding uses unless
// a comment at its call says why a library must be Global (a library that
// other libraries find by soname and must see our copy of).
//
// # Names
//
// Open tries each candidate name in order (for example "libfoo.so.1", then
// "libfoo.so") and keeps the first that loads; Library.Name says which one.
// When none loads, the error carries the dynamic loader's message for every
// candidate.
//
// # Errors
//
// Every failure is an *Error naming the operation (dlopen, dlsym, dlvsym,
// dlinfo, dlclose), the library, the symbol where there is one, and the
// dynamic loader's own text (dlerror). dlerror is per thread, so it is read
// in the same C call as the operation that failed, never in a later cgo call
// that may run on another thread.
//
// # Lifetime and threading
//
// A *Library is safe for concurrent use. Close is idempotent; Lookup after
// Close fails with ErrClosed instead of touching a released handle. Most
// bindings keep their libraries open for the life of the process (the
// resolved addresses live in C tables); probes close what they opened.
package dl
