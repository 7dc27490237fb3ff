// Package doctorprobe holds the host probes of package doctor that need cgo
// or the internal CUDA binding: loading a shared library to look its symbols
// up (dlopen), reading a GPU's dmabuf attribute, and host-registering a NIC
// doorbell page for a GPU. Package doctor wraps them in its public probe
// types (DLProbe, CUDA, Doorbell), which add the doctor's error sentinels;
// nothing else should call this package.
//
// Every function releases what it acquires before it returns (dlclose, the
// host registration, the primary context reference) and is safe for
// concurrent use.
package doctorprobe
