// The copier: a small kernel that runs the emulated NIC's short batches of
// copies (WQE and DBR reads, payload reads, remote writes, CQEs) on the GPU
// itself, so that a batch costs one round trip over PCIe (about 3 us on an
// H100) instead of a copy-engine copy and a stream wait (about 6 us each).
// copier.go describes the protocol; this file is its GPU half. It is
// compiled to PTX by `go generate` (copier.ptx, embedded) and loaded by the
// driver's JIT, so no kernel image for a particular GPU is needed.
//
// One block runs at a time per CUDA context. Thread 0 polls the control
// block, which lives in pinned host memory mapped for the GPU; every
// thread copies. A batch's descriptors are read only after its sequence
// number, and its completion is published only after a system-wide fence,
// so the host sees every byte the batch wrote once it sees `done`.

struct gdaki_copier_desc {
    unsigned long long src;
    unsigned long long dst;
    unsigned long long len; // bytes | the batch's sequence number << 32
};

// Keep in step with copier.go (ctl* offsets, maxDesc, fastDesc).
#define GDAKI_COPIER_MAX_DESC 64
// The descriptors start at word 4 of the control block; the first 9 lie in
// its first 32 words (256 bytes), which warp 0 reads with each look.
#define GDAKI_COPIER_DESC_WORD 4
#define GDAKI_COPIER_FAST_DESC 9

struct gdaki_copier_ctl {
    unsigned long long post;  // host: the newest batch's sequence number | descriptor count << 32
    unsigned int cancel;      // host: an epoch that must end without running anything
    unsigned int pad0;
    unsigned int done;        // GPU: the newest batch finished
    unsigned int started;     // GPU: the epoch of the instance that began
    unsigned int exited;      // GPU: the epoch of the instance that ended
    unsigned int pad1;
    gdaki_copier_desc d[GDAKI_COPIER_MAX_DESC];
    // GPU: globaltimer stamps of the newest batch, stored before done: when
    // the posted word was seen, when the descriptors were in, when the
    // copies had been fenced.
    unsigned long long t_seen;
    unsigned long long t_desc;
    unsigned long long t_copied;
    unsigned long long pad2;
};

static __device__ __forceinline__ unsigned long long gdaki_copier_now(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// copy_range moves len bytes with every thread of the block, 16 bytes at a
// time when both ends and the length allow it. Loads are volatile: the
// source may have been written by another kernel on another SM (a WQE) or
// by the host (pinned memory), and must not come from a stale L1 line.
static __device__ __forceinline__ void gdaki_copier_range(unsigned long long src, unsigned long long dst,
                                                          unsigned long long len)
{
    unsigned long long i = threadIdx.x;
    const unsigned long long step = blockDim.x;
    if (((src | dst | len) & 15) == 0) {
        const volatile uint4 *s = (const volatile uint4 *)src;
        uint4 *d = (uint4 *)dst;
        for (unsigned long long n = len / 16; i < n; i += step) {
            uint4 v;
            v.x = s[i].x;
            v.y = s[i].y;
            v.z = s[i].z;
            v.w = s[i].w;
            d[i] = v;
        }
    } else if (((src | dst | len) & 3) == 0) {
        const volatile unsigned int *s = (const volatile unsigned int *)src;
        unsigned int *d = (unsigned int *)dst;
        for (unsigned long long n = len / 4; i < n; i += step)
            d[i] = s[i];
    } else {
        const volatile unsigned char *s = (const volatile unsigned char *)src;
        unsigned char *d = (unsigned char *)dst;
        for (; i < len; i += step)
            d[i] = s[i];
    }
}

// gdaki_emu_copier serves batches until it has been idle for idle_ns, has
// run for life_ns, or the host cancels its epoch; it then records its epoch
// in `exited` and ends. The bounded life keeps a context synchronization
// (cuCtxSynchronize, an implicitly synchronizing cuMemFree) from waiting on
// it for more than life_ns.
extern "C" __global__ void gdaki_emu_copier(struct gdaki_copier_ctl *c, unsigned int epoch,
                                            unsigned long long idle_ns, unsigned long long life_ns)
{
    volatile struct gdaki_copier_ctl *vc = c;
    __shared__ unsigned int s_state, s_seq, s_n, s_fast;
    __shared__ unsigned long long s_desc[3 * GDAKI_COPIER_MAX_DESC];
    unsigned int seen = vc->done;
    if (threadIdx.x == 0) {
        vc->started = epoch;
        __threadfence_system();
    }
    const unsigned long long t0 = gdaki_copier_now();
    unsigned long long last = t0;
    for (;;) {
        if (threadIdx.x < 32) {
            // Warp 0 looks with one read over PCIe: lane l loads word l of
            // the control block, which holds the posted word, cancel and
            // the first GDAKI_COPIER_FAST_DESC descriptors. Each
            // descriptor's length word carries the sequence number of its
            // batch in its upper half, stored last by the host: when every
            // descriptor of the batch shows the posted number, those read
            // with the posted word are the batch's, and the block skips a
            // second round trip to fetch them.
            const unsigned int lane = threadIdx.x;
            const volatile unsigned long long *cw = (const volatile unsigned long long *)c;
            unsigned int state = 0;
            while (state == 0) {
                const unsigned long long v = cw[lane];
                const unsigned long long post = __shfl_sync(0xffffffffu, v, 0);
                const unsigned int cancel = (unsigned int)__shfl_sync(0xffffffffu, v, 1);
                const unsigned int s = (unsigned int)post;
                if (cancel == epoch) {
                    state = 2;
                } else if (s != seen) {
                    const unsigned int n = min((unsigned int)(post >> 32), (unsigned int)GDAKI_COPIER_MAX_DESC);
                    const unsigned int w = lane - GDAKI_COPIER_DESC_WORD; // word of the descriptors (wraps below)
                    const bool mine = w < 3 * n && w < 3 * GDAKI_COPIER_FAST_DESC;
                    const bool stale = mine && w % 3 == 2 && (unsigned int)(v >> 32) != s;
                    const bool fast = n <= GDAKI_COPIER_FAST_DESC && !__any_sync(0xffffffffu, stale);
                    if (fast && mine)
                        s_desc[w] = v;
                    if (lane == 0) {
                        s_seq = s;
                        s_n = n;
                        s_fast = fast;
                        // What the batch reads (descriptors, staged bytes)
                        // after the posted word.
                        __threadfence_system();
                    }
                    state = 1;
                } else {
                    unsigned int end = 0;
                    if (lane == 0) {
                        unsigned long long now = gdaki_copier_now();
                        end = now - last > idle_ns || now - t0 > life_ns;
                    }
                    if (__shfl_sync(0xffffffffu, end, 0))
                        state = 2;
                }
            }
            if (lane == 0)
                s_state = state;
        }
        const unsigned long long t_seen = gdaki_copier_now();
        __syncthreads();
        if (s_state == 2)
            break;
        const unsigned int n = s_n;
        if (!s_fast) {
            // Every thread loads a word of the descriptors: one round trip.
            const volatile unsigned long long *dw = (const volatile unsigned long long *)vc->d;
            for (unsigned int i = threadIdx.x; i < 3 * n; i += blockDim.x)
                s_desc[i] = dw[i];
        }
        __syncthreads();
        const unsigned long long t_desc = gdaki_copier_now();
        for (unsigned int k = 0; k < n; k++)
            gdaki_copier_range(s_desc[3 * k], s_desc[3 * k + 1], s_desc[3 * k + 2] & 0xffffffffull);
        __threadfence_system();
        __syncthreads();
        seen = s_seq;
        if (threadIdx.x == 0) {
            vc->t_seen = t_seen;
            vc->t_desc = t_desc;
            vc->t_copied = gdaki_copier_now();
            vc->done = seen;
            __threadfence_system();
            last = gdaki_copier_now();
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        __threadfence_system();
        vc->exited = epoch;
        __threadfence_system();
    }
}
