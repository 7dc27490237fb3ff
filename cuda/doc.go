// Package cuda is the GPU side of a GDAKI program in Go: it lists GPUs,
// retains their contexts, loads modules (fatbin, cubin, PTX) or compiles
// CUDA C++ at run time with NVRTC against the GPUNetIO device headers it
// embeds, launches kernels with typed arguments, and runs streams, events
// and copies. It binds the CUDA driver API and NVRTC, both loaded at run
// time, so a program that imports it builds and starts on any machine.
//
// A typical program opens the GPU with gpunetio.NewGPU, exports its QPs
// there, takes the GPU's context with (*gpunetio.GPU).CUDAContext, compiles
// or loads its kernel, and launches it with the exported QP's device
// pointer; see the package example.
//
// # Loading
//
// No CUDA header or library is needed to build: the binding declares the
// few driver types it uses itself and links only libdl. On first use the
// package dlopens libcuda.so.1, resolves the versioned entry points the
// CUDA headers map the API names to (cuMemAlloc_v2, cuMemHostRegister_v2,
// cuDevicePrimaryCtxRelease_v2, ...) and calls cuInit(0). Without a driver
// the first call fails with an error matching ErrNoDriver (the library or
// an entry point is missing, or it is the toolkit's stub), and with a driver
// that sees no GPU with one matching ErrNoDevice.
// cuMemGetHandleForAddressRange (CUDA 11.7+) is optional: without it only
// the dmabuf export fails, with CUDA_ERROR_NOT_SUPPORTED.
//
// NVRTC is loaded the same way, on the first Compile (or NVRTCVersion,
// NVRTCLibrary, NVRTCSupportedArchs), independently of the driver: Compile
// works on a machine without a GPU. The library tried is the one named by
// the environment variable GPUNETIO_NVRTC (NVRTCEnv) when it is set;
// otherwise libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so.11.2
// through the dynamic loader's search path, then the same names in
// $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64, the toolkit's
// targets/<arch>-linux/lib directories and /usr/local/cuda-X.Y/lib64, newest
// first. A library found in a directory has the libnvrtc-builtins libraries
// beside it opened first, since libnvrtc looks for them only on the loader's
// search path. Without a usable library, Compile fails with an error
// matching ErrNoNVRTC that lists what was tried.
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
// Every exported function and method is safe for concurrent use. A Context,
// Stream, Event or Module stays valid for calls in flight while another
// goroutine releases it; later calls fail with ErrReleased. NVRTC compiles
// may run concurrently.
//
// # Lifetime
//
// Device.PrimaryContext (and gpunetio's GPU.CUDAContext) retains the
// device's primary context (the context the CUDA runtime also uses) and
// Context.Release drops that reference. A Context records what is made
// through it: device allocations, pinned host allocations, host
// registrations, modules, streams and events. Every Free, Unregister,
// Destroy, Unload and Release is idempotent: a second call, or a call for a
// pointer not live in this Context, does nothing and returns nil. Release
// refuses with ErrInUse while anything is live (Context.Live counts them),
// so nothing is freed behind its owner's back. Nothing is freed by a
// finalizer.
//
// Only this package makes usable objects. Every method of a zero value (a
// declared Context, Stream, Event, Module, Function, Buffer or Device)
// fails with ErrZeroValue, and every method of a released, destroyed,
// unloaded or freed object (or of one whose Context was released) fails
// with ErrReleased, except the idempotent frees above; both come as a
// *UsageError naming the type and the method ("cuda: Context.MemAlloc:
// zero value, ..."), before any driver call, whether or not the driver is
// loaded. The C shims behind this package never call an entry point the
// driver library did not resolve: such a call fails with
// ErrDriverNotLoaded (which matches ErrNoDriver).
//
// LiveObjects lists every Context not released and everything live in one;
// LeakReport formats that list for a TestMain. With RecordStacks(true) (or
// GPUNETIO_CUDA_STACKS=1 in the environment) each entry carries the stack
// that created the object; recording is off by default and costs nothing
// then.
//
// # Memory a NIC or GPU touches
//
// Device memory comes from MemAlloc (or Alloc, typed and bounds-checked);
// host memory the GPU maps comes from MemAllocHost
// (HostAllocPortable|HostAllocDeviceMap) or from mmap/C memory registered
// with MemHostRegister. Never register Go heap memory: the Go runtime may
// move or free it while the GPU or a NIC uses it. A NIC doorbell (UAR) page
// mapped into the process is registered with
// HostRegisterIOMemory|HostRegisterDeviceMap|HostRegisterPortable, after
// which HostGetDevicePointer gives the address GPU threads store to; CUDA
// refuses IOMEMORY on ordinary RAM. Device memory that a NIC writes gets
// PointerSetSyncMemops(p, true), and is exported to the NIC either as a
// dmabuf fd (MemGetHandleForAddressRange; host-page-aligned ranges; the
// caller closes the fd) or by its virtual address through nvidia-peermem.
// gpunetio.GPU.MemAlloc does all of this for the memory types DOCA knows.
//
// The synchronous copies (MemcpyHtoD, MemcpyDtoH, CopyToDevice,
// CopyFromDevice, Buffer.Write and Buffer.Read) accept Go slices: the copy
// has finished when they return. The Async ones take pinned C memory,
// because the copy outlives the call.
//
// # Kernel arguments
//
// LaunchKernel marshals each argument to the bytes of the kernel's
// parameter: fixed-size integers, floats and bool (named types by their
// underlying type, so gpunetio.DevPtr and DevPtr pass as they are),
// unsafe.Pointer for mapped host memory, and plain structs, copied with
// their Go layout after a check that it is the C layout of the same
// declaration. int and uint are refused, since C's int is 32 bits. The
// driver cannot check arguments against the kernel's parameters: types and
// count must match the kernel's signature.
//
// # NVRTC and the embedded device headers
//
// The GPUNetIO device headers of cuda/include are embedded in the package
// (Headers, HeaderNames) and handed to NVRTC as in-memory headers on every
// Compile, under each include style cuda/README.md documents: the umbrella
// <doca_gpunetio_device.h>, sub-directory paths
// (<device/doca_gpunetio_dev_verbs_onesided.cuh>) and bare names
// (<doca_gpunetio_dev_verbs_onesided.cuh>, <doca_error.h>). A kernel written
// for DOCA GPUNetIO therefore compiles from a Go string with no include
// path, no nvcc and no files on disk. The dialect defaults to C++17.
// CompileOptions picks the architecture (by default the device's own,
// giving a cubin; falling back to PTX for the driver's JIT when NVRTC is
// older than the GPU), -D defines, extra headers, mangled names of C++
// kernels and verbatim flags. Compiled.Image is what ModuleLoadData loads.
//
// # Errors
//
// A failed driver call returns *Error with the C entry point (Op) and the
// CUresult, formatted with its enum name and the driver's text, for example
// "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
// errors.Is matches the Result (errors.Is(err, cuda.ErrorOutOfMemory)),
// ErrNoDriver and ErrNoDevice; a failed module load carries the JIT log in
// Error.Detail. A failed NVRTC call returns *NVRTCError with the entry point,
// the nvrtcResult and, for a compile error, the compiler's full log, which
// the error text includes; errors.Is matches its NVRTCResult
// (errors.Is(err, cuda.NVRTCErrorCompilation)) and ErrNoNVRTC. Kernel
// arguments that cannot be marshalled match ErrBadArgument (an
// *ArgumentError naming the kernel, the argument's position and its Go
// type), objects used after release ErrReleased, zero values ErrZeroValue.
// A string that would not cross into C whole (a NUL byte in Compile's
// source, program name, header names or texts, defines, flags, name
// expressions or architecture, or in a kernel or variable name) is refused
// before any C call with an *InputError naming the input and the byte
// offset; it matches ErrInvalidInput. The blocking Synchronize methods wait without a
// deadline; Stream.Wait and Event.Wait take a timeout and fail with
// ErrTimeout, which is what host code waiting on kernels that poll a NIC
// should use.
//
// # Map to the C API
//
//	cuInit, cuDriverGetVersion            Init, DriverVersion
//	cuGetErrorName, cuGetErrorString      GetErrorName, GetErrorString, Result.Name, Result.Text
//	cuDeviceGetCount, cuDeviceGet         DeviceCount, DeviceGet, Devices
//	cuDeviceGetByPCIBusId                 DeviceByPCIBusID (after ParsePCIBusID)
//	cuDeviceGetName, cuDeviceTotalMem_v2  Device.Name, Device.TotalMem, Device.Info
//	cuDeviceGetAttribute                  Device.Attribute and its helpers
//	cuDeviceGetPCIBusId                   Device.PCIBusID
//	(sysfs numa_node)                     Device.NUMANode
//	cuDevicePrimaryCtxRetain / Release_v2 Device.PrimaryContext / Context.Release
//	cuCtxPushCurrent_v2 / PopCurrent_v2   every Context method; Context.Do
//	cuCtxSynchronize, cuMemGetInfo_v2     Context.Synchronize, Context.MemGetInfo
//	cuMemAlloc_v2 / cuMemFree_v2          Context.MemAlloc / MemFree; Alloc / Buffer.Free
//	cuMemHostAlloc / cuMemFreeHost        Context.MemAllocHost / MemFreeHost
//	cuMemHostGetDevicePointer_v2          Context.HostGetDevicePointer
//	cuMemHostRegister_v2 / Unregister     Context.MemHostRegister / MemHostUnregister
//	cuMemcpyHtoD_v2, cuMemcpyDtoH_v2      Context.MemcpyHtoD, MemcpyDtoH; CopyToDevice, CopyFromDevice; Buffer.Write, Read, Elements
//	cuMemcpy{HtoD,DtoH,DtoD}Async_v2      Context.Memcpy{HtoD,DtoH,DtoD}Async
//	cuMemcpyDtoD_v2                       Context.MemcpyDtoD
//	cuMemsetD8_v2, cuMemsetD32_v2 [Async] Context.MemsetD8, MemsetD32 [Async]; Buffer.Zero
//	cuPointerGetAttribute                 Context.PointerGetAttribute, PointerMemoryType, PointerRange, IsDevicePointer
//	cuPointerSetAttribute (SYNC_MEMOPS)   Context.PointerSetSyncMemops
//	cuMemGetAddressRange_v2               Context.MemGetAddressRange
//	cuMemGetHandleForAddressRange         Context.MemGetHandleForAddressRange
//	cuModuleLoadDataEx / cuModuleUnload   Context.ModuleLoadData, ModuleLoadFile / Module.Unload
//	cuModuleGetFunction, GetGlobal_v2     Module.Function, Module.Global
//	cuLaunchKernel                        Context.LaunchKernel
//	cuStreamCreate/Synchronize/Query/Destroy_v2  Context.NewStream, Stream.*
//	cuEventCreate/Record/Synchronize/Query/ElapsedTime/Destroy_v2  Context.NewEvent, Event.*, ElapsedTime
//	nvrtcVersion, nvrtcGetSupportedArchs  NVRTCVersion, NVRTCSupportedArchs
//	nvrtcCreateProgram, nvrtcAddNameExpression, nvrtcCompileProgram,
//	nvrtcGetProgramLog, nvrtcGetPTX, nvrtcGetCUBIN, nvrtcGetLoweredName,
//	nvrtcDestroyProgram                   Compile (one call does them all)
//	nvrtcGetErrorString                   NVRTCResult.Name
//
// BAR1 size is not a CUDA device attribute; it comes from NVML
// (nvmlDeviceGetBAR1MemoryInfo).
package cuda
