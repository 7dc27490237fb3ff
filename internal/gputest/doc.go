// Package gputest holds the GPU test suite of the device headers: the
// kernels of cuda/test/device_api_test.cu (built by `make kernels` into
// build/kernels/test_device_api_test.fatbin) are launched from Go on
// high-level QPs whose rings live in GPU memory, connected between the two
// emulated NICs emu0 (initiator) and emu1 (target), and every byte and
// counter they move is checked from the host.
//
// The package has no exported API; everything is in its tests, which are
// named TestGPU... so that `-test.run GPU` selects them. Without a CUDA
// driver or GPU they skip ("no CUDA driver" / "no GPU"), and without the
// kernel image they skip with "kernels not built: run make kernels". The
// image is looked for in $GDAKI_KERNELS (a directory or the file itself),
// then ../../build/kernels relative to the package directory, then
// build/kernels in the working directory and each of its parents.
//
// Lifetime: one environment (GPU, CUDA context, module, stream, CPU-proxy
// service, one registered 1 MiB GPU buffer per NIC) and one QP fixture per
// NIC handler are created on first use and shared by all tests; TestMain
// releases them after the run. If a kernel outlives its host-side wait, the
// environment is abandoned: nothing is released (the kernel may still use
// the memory) and every later test fails at once.
//
// Threading: tests run one at a time (no t.Parallel); each kernel launch is
// waited for with a timeout before the next starts. The kernels themselves
// bound every device-side wait with a %globaltimer deadline and report
// errors through a status word instead of hanging, except gt_errwait_*,
// which call the blocking waits directly on a failing QP to prove that they
// return by themselves (TestGPUWaitsReturnOnError): a wait that hung would
// run into the launch timeout and fail the test.
//
// The NIC model: GPU_SM_NO_DBR needs the ConnectX-8 model of the emulator.
// TestMain sets GDAKI_EMU_MODEL=cx8 when it is unset (the model is a
// superset of cx7 for everything else); with GDAKI_EMU_MODEL=cx7 the no-DBR
// cases skip.
package gputest
