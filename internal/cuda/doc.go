// Package cuda binds the CUDA driver API, loaded at run time from
// libcuda.so.1.
//
// # Loading
//
// No CUDA header or library is needed to build: the package declares the
// few driver types and constants it uses itself (each constant cites the
// CUDA enum it comes from) and links only libdl. On first use it dlopens
// libcuda.so.1, resolves the versioned entry points the CUDA headers map the
// API names to (cuMemAlloc_v2, cuMemHostRegister_v2,
// cuDevicePrimaryCtxRelease_v2, cuMemcpyHtoD_v2, ...) and calls cuInit(0).
// A binary therefore builds and starts on a machine without a driver; the
// first CUDA call then fails with an error matching ErrNoDriver (the library
// or an entry point is missing, or it is the toolkit stub) or ErrNoDevice
// (the driver sees no GPU). cuMemGetHandleForAddressRange (CUDA 11.7+) is
// optional: without it only the dmabuf export fails, with
// CUDA_ERROR_NOT_SUPPORTED.
//
// # Threading: contexts are per OS thread
//
// The driver keeps a current context per OS thread, and goroutines move
// between OS threads at any time. The rule this package follows is: every
// driver call that needs a context runs inside one cgo call that makes the
// Context current on that thread (cuCtxPushCurrent_v2, skipped when it is
// already current), makes the call, and restores the previous context
// (cuCtxPopCurrent_v2). A cgo call never changes thread, so no call can run
// under the wrong context, and the calling goroutine need not be locked to
// its thread. Callers never make a context current themselves. Code that
// must call CUDA by other means (its own C code, several calls that must
// share one thread) wraps them in Context.Do, which locks the goroutine to
// its thread and pushes and pops the context around the function.
//
// Every exported method is safe for concurrent use. A Context, Stream, Event
// or Module stays valid for calls in flight while another goroutine releases
// it; later calls fail with ErrReleased.
//
// # Lifetime
//
// Device.PrimaryContext retains the device's primary context (the context
// the CUDA runtime also uses) and Context.Release drops that reference. A
// Context records what is made through it: device allocations, pinned host
// allocations, host registrations, modules, streams and events. Every
// Free, Unregister, Destroy, Unload and Release is idempotent: a second call,
// or a call for a pointer not live in this Context, does nothing and returns
// nil. Release refuses with ErrInUse while anything is live (Context.Live
// counts them), so nothing is freed behind its owner's back. Nothing is
// freed by a finalizer.
//
// # Memory a NIC or GPU touches
//
// Device memory comes from MemAlloc; host memory the GPU maps comes from
// MemAllocHost (HostAllocPortable|HostAllocDeviceMap) or from mmap/C memory
// registered with MemHostRegister. Never register Go heap memory. A NIC
// doorbell (UAR) page mapped into the process is registered with
// HostRegisterIOMemory|HostRegisterDeviceMap|HostRegisterPortable, after
// which HostGetDevicePointer gives the address GPU threads store to; CUDA
// refuses IOMEMORY on ordinary RAM. Device memory that a NIC writes gets
// PointerSetSyncMemops(p, true), and is exported to the NIC either as a
// dmabuf fd (MemGetHandleForAddressRange; host-page-aligned ranges; the
// caller closes the fd) or by its virtual address through nvidia-peermem.
// The synchronous copies accept Go slices; the Async ones take pinned C
// memory, because the copy outlives the call.
//
// # Errors
//
// A failed call returns *Error with the C entry point (Op) and the CUresult,
// formatted with its enum name and the driver's text, for example
// "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
// errors.Is matches the Result (errors.Is(err, cuda.ErrorOutOfMemory)),
// ErrNoDriver and ErrNoDevice. The blocking Synchronize methods wait without
// a deadline; Stream.Wait and Event.Wait take a timeout and fail with
// ErrTimeout, which is what host code waiting on kernels that poll a NIC
// should use.
//
// # Map to the C API
//
//	cuInit, cuDriverGetVersion            Init, DriverVersion
//	cuGetErrorName, cuGetErrorString      GetErrorName, GetErrorString, Result.Name, Result.Text
//	cuDeviceGetCount, cuDeviceGet         DeviceCount, DeviceGet
//	cuDeviceGetByPCIBusId                 DeviceByPCIBusID (after ParsePCIBusID)
//	cuDeviceGetName, cuDeviceTotalMem_v2  Device.Name, Device.TotalMem
//	cuDeviceGetAttribute                  Device.Attribute and its helpers
//	cuDeviceGetPCIBusId                   Device.PCIBusID
//	cuDevicePrimaryCtxRetain / Release_v2 Device.PrimaryContext / Context.Release
//	cuCtxPushCurrent_v2 / PopCurrent_v2   every Context method; Context.Do
//	cuCtxSynchronize, cuMemGetInfo_v2     Context.Synchronize, Context.MemGetInfo
//	cuMemAlloc_v2 / cuMemFree_v2          Context.MemAlloc / MemFree
//	cuMemHostAlloc / cuMemFreeHost        Context.MemAllocHost / MemFreeHost
//	cuMemHostGetDevicePointer_v2          Context.HostGetDevicePointer
//	cuMemHostRegister_v2 / Unregister     Context.MemHostRegister / MemHostUnregister
//	cuMemcpy{HtoD,DtoH,DtoD}[Async]_v2    Context.Memcpy{HtoD,DtoH,DtoD}[Async]
//	cuMemsetD8_v2, cuMemsetD32_v2 [Async] Context.MemsetD8, MemsetD32 [Async]
//	cuPointerGetAttribute                 Context.PointerGetAttribute, PointerMemoryType, PointerRange, IsDevicePointer
//	cuPointerSetAttribute (SYNC_MEMOPS)   Context.PointerSetSyncMemops
//	cuMemGetAddressRange_v2               Context.MemGetAddressRange
//	cuMemGetHandleForAddressRange         Context.MemGetHandleForAddressRange
//	cuModuleLoadDataEx / cuModuleUnload   Context.ModuleLoadData / Module.Unload
//	cuModuleGetFunction, GetGlobal_v2     Module.Function, Module.Global
//	cuLaunchKernel                        Context.LaunchKernel
//	cuStreamCreate/Synchronize/Query/Destroy_v2  Context.NewStream, Stream.*
//	cuEventCreate/Record/Synchronize/Query/ElapsedTime/Destroy_v2  Context.NewEvent, Event.*, ElapsedTime
//
// BAR1 size is not a CUDA device attribute; it comes from NVML
// (nvmlDeviceGetBAR1MemoryInfo).
package cuda
