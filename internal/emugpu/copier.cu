// The copier: a small kernel that runs the emulated NIC's short batches of
// copies (WQE and DBR reads, payload reads, remote writes, CQEs) on the GPU
// itself, so that a batch costs one round trip over PCIe (about 3 us on an
// H100) instead of a copy-engine copy and a stream wait (about 6 us each).
// copier.go describes the protocol; this file is its GPU half. It is
// compiled to PTX by `go generate` (copier.ptx, embedded) and loaded by the
// driver's JIT, so no kernel image for a particular GPU is needed.
//
// One instance (a grid of two blocks) runs at a time per CUDA context,
// and beside it, in a module of its own, the side copier's (one block, no
// watches; emugpu.go). In block 0, warp 0 polls the control block, which lives in pinned host
// memory mapped for the GPU, and every thread copies; block 1 runs the
// send-queue watches (below). A batch's descriptors are read only after its sequence
// number, and its completion is published only after a system-wide fence,
// so the host sees every byte the batch wrote once it sees `done`.

struct gdaki_copier_desc {
    unsigned long long src;
    unsigned long long dst;
    unsigned long long len; // bytes | the batch's sequence number << 32
};

// Keep in step with copier.go (ctl* offsets, maxDesc, fastDesc, maxInline).
#define GDAKI_COPIER_MAX_DESC 64
// The descriptors start at word 4 of the control block; the first 9 lie in
// its first 32 words (256 bytes), which warp 0 reads with each look.
#define GDAKI_COPIER_DESC_WORD 4
#define GDAKI_COPIER_FAST_DESC 9
#define GDAKI_COPIER_LOOK_WORDS 32
// A batch's inline words follow its descriptors inside the look: at most
// the look less the header and one descriptor.
#define GDAKI_COPIER_INLINE_WORDS (GDAKI_COPIER_LOOK_WORDS - GDAKI_COPIER_DESC_WORD - 3)
// The low half of a descriptor's length word: the byte count, a flag that
// takes the bytes from the batch's inline words (the source is then the
// index of the first word in the control block), and a flag that orders
// the copy after the batch's earlier ones (copier.go sets it on a copy that
// follows one into device memory).
#define GDAKI_COPIER_LEN 0x3fffffffull
#define GDAKI_COPIER_INLINE 0x40000000ull
#define GDAKI_COPIER_AFTER 0x80000000ull

// Send-queue watches (watch.go): block 1 of the grid, one warp, looks at
// the send counters of up to GDAKI_WATCH_MAX QPs in device memory and
// pushes each change to the host: the ring slots from the last counter it
// pushed up to the new one, then the bytes of the watch's guess, then
// (after a system fence) the state word. It runs beside block 0, the
// copier, so that a batch never waits for it. The host keeps two copies of
// the table and flips between them with watch_gen; block 1 loads the copy
// of the newest generation into shared memory and acknowledges it in
// watch_ack, after which the host may rewrite the other copy.
#define GDAKI_WATCH_MAX 8
#define GDAKI_WATCH_GUESS_OPS 4
#define GDAKI_WATCH_GUESS_MAX 4096
#define GDAKI_WATCH_WORDS 16 // 64-bit words of an entry
#ifndef GDAKI_WATCH_PAUSE_NS
#define GDAKI_WATCH_PAUSE_NS 200 // between looks that found no change
#endif

struct gdaki_watch {
    unsigned long long dbr;    // device address of the 32-bit big-endian send counter; 0: an unused entry
    unsigned long long ring;   // device address of ring slot 0 (64-byte slots)
    unsigned long long mirror; // the host's copy of the ring (mapped for the GPU)
    unsigned long long state;  // the host's state word: index | push number << 16 | guess generation << 32
    unsigned long long guess;  // the host's two guess areas, GDAKI_WATCH_GUESS_MAX bytes each
    unsigned int log_size;     // log2 of the ring's slots
    unsigned int nguess;
    unsigned int guess_gen;
    unsigned int pad;
    struct {
        unsigned long long src;
        unsigned long long len;
    } g[GDAKI_WATCH_GUESS_OPS];
    unsigned long long pad2;
};

struct gdaki_copier_ctl {
    unsigned long long post;  // host: sequence number | descriptor count << 32 | inline words << 48 | writes host memory << 56
    unsigned int cancel;      // host: an epoch that must end without running anything
    unsigned int watch_gen;   // host: the generation of the watch table (its copy: gen & 1)
    unsigned int done;        // GPU: the newest batch finished
    unsigned int started;     // GPU: the epoch of the instance that began
    unsigned int exited;      // GPU: the epoch of the instance that ended
    unsigned int watch_ack;   // GPU: the watch table generation block 1 has loaded
    gdaki_copier_desc d[GDAKI_COPIER_MAX_DESC];
    // GPU: globaltimer stamps of the newest batch, stored before done: when
    // the posted word was seen, when the descriptors were in, when the
    // copies had been fenced.
    unsigned long long t_seen;
    unsigned long long t_desc;
    unsigned long long t_copied;
    unsigned int watch_exited; // GPU: the epoch whose block 1 ended
    unsigned int pad2;
    struct gdaki_watch watch[2][GDAKI_WATCH_MAX]; // host: the table, two copies
};

static __device__ __forceinline__ unsigned long long gdaki_copier_now(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// gdaki_load16 loads 16 bytes with one volatile vector load: the source
// may have been written by another kernel on another SM (a WQE) or by the
// host (pinned memory), and must not come from a stale L1 line. One load,
// not four: four volatile 32-bit loads of host memory go over PCIe one
// after another (measured on an H100: a 64-byte copy from pinned memory
// took 5 to 7 us of the kernel's time that way, about 2.5 us with one load
// per thread).
static __device__ __forceinline__ uint4 gdaki_load16(const volatile uint4 *p)
{
    uint4 v;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// gdaki_copier_range moves len bytes with the threads first, first+step,
// ... (a block: threadIdx.x, blockDim.x; a warp: its lane, 32), 16 bytes
// at a time when both ends and the length allow it. Loads are volatile
// (gdaki_load16).
static __device__ __forceinline__ void gdaki_copier_range(unsigned long long src, unsigned long long dst,
                                                          unsigned long long len, unsigned int first,
                                                          unsigned int step)
{
    unsigned long long i = first;
    if (((src | dst | len) & 15) == 0) {
        const volatile uint4 *s = (const volatile uint4 *)src;
        uint4 *d = (uint4 *)dst;
        for (unsigned long long n = len / 16; i < n; i += step)
            d[i] = gdaki_load16(&s[i]);
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

// gdaki_copier_inline writes len bytes of inline words w (four bytes to a
// word, the first in the low byte) to dst with the threads first,
// first+step, ..., a word each: one 32-bit store where it can, bytes at
// the ends of an unaligned destination.
static __device__ __forceinline__ void gdaki_copier_inline(const unsigned int *w, unsigned long long dst,
                                                           unsigned int len, unsigned int first, unsigned int step)
{
    for (unsigned int i = first; i < (len + 3) / 4; i += step) {
        const unsigned int x = w[i];
        const unsigned long long d = dst + 4ull * i;
        const unsigned int m = min(4u, len - 4 * i);
        if (m == 4 && (d & 3) == 0) {
            *(unsigned int *)d = x;
        } else {
            for (unsigned int b = 0; b < m; b++)
                ((unsigned char *)d)[b] = (unsigned char)(x >> (8 * b));
        }
    }
}

static __device__ __forceinline__ unsigned int gdaki_bswap32(unsigned int v)
{
    return __byte_perm(v, 0, 0x0123);
}

// gdaki_watch_push pushes one change of watch w's counter, from last to v
// (raw big-endian words; full: the whole ring), as push number seq.
static __device__ void gdaki_watch_push(const struct gdaki_watch *w, unsigned int v, unsigned int last, bool full,
                                        unsigned int seq, unsigned int lane)
{
    // The WQEs and the guessed bytes are loaded after the counter: software
    // stored them before it, with a fence between. Lane 0 loaded the
    // counter; its fence and the warp barrier order every lane's loads
    // after that load.
    __threadfence();
    __syncwarp();
    const unsigned int size = 1u << w->log_size;
    const unsigned int to = gdaki_bswap32(v) & 0xffffu;
    unsigned int from = gdaki_bswap32(last) & 0xffffu;
    unsigned int n = (to - from) & 0xffffu;
    if (full || n > size) {
        from = 0;
        n = size;
    }
    const volatile uint4 *ring = (const volatile uint4 *)w->ring;
    uint4 *mirror = (uint4 *)w->mirror;
    // Eight loads in flight per lane: a lane stalls at its first store
    // until that load returns, so one load and one store at a time cost a
    // load's latency per 512 bytes of the warp (BenchmarkGPUWatchPush on an
    // H100: a push of 512 WQEs 19.5-20.6 us that way, 9.3-10.3 us with
    // eight; of one WQE 6.5-7.7 us either way, the counter's batch included).
    const unsigned int total = 4 * n;
    unsigned int i = lane;
    for (; i + 32 * 7 < total; i += 32 * 8) {
        uint4 v[8];
        unsigned int k[8];
#pragma unroll
        for (int d = 0; d < 8; d++) {
            k[d] = ((from + (i + 32 * d) / 4) & (size - 1)) * 4 + ((i + 32 * d) & 3);
            v[d] = gdaki_load16(&ring[k[d]]);
        }
#pragma unroll
        for (int d = 0; d < 8; d++)
            mirror[k[d]] = v[d];
    }
    for (; i < total; i += 32) {
        const unsigned int k = ((from + i / 4) & (size - 1)) * 4 + (i & 3);
        mirror[k] = gdaki_load16(&ring[k]);
    }
    unsigned long long at = w->guess + (unsigned long long)(seq & 1) * GDAKI_WATCH_GUESS_MAX;
    for (unsigned int g = 0; g < w->nguess && g < GDAKI_WATCH_GUESS_OPS; g++) {
        gdaki_copier_range(w->g[g].src, at, w->g[g].len, lane, 32);
        at += w->g[g].len;
    }
    // Lane 0's system fence, after the warp barrier, orders every lane's
    // copies before the state word (fences are cumulative).
    __syncwarp();
    if (lane == 0) {
        __threadfence_system();
        *(volatile unsigned long long *)w->state =
            (unsigned long long)to | (unsigned long long)(seq & 0xffffu) << 16 | (unsigned long long)w->guess_gen << 32;
        // The next push's bytes reach the host after this state word.
        __threadfence_system();
    }
    __syncwarp();
}

// gdaki_watch_table is block 1's copy of the table and its push state.
struct gdaki_watch_table {
    struct gdaki_watch w[GDAKI_WATCH_MAX];
    unsigned int last[GDAKI_WATCH_MAX]; // the raw counter last pushed
    unsigned int seq[GDAKI_WATCH_MAX];  // the number of the next push
    unsigned int full[GDAKI_WATCH_MAX]; // the next push copies the whole ring
    unsigned int gen;                   // the generation loaded
};

// gdaki_watch_load loads generation gen of the table (block 1). An entry
// whose queue changed (or is new) is pushed whole next, and its push
// numbers continue from the host's state word.
static __device__ void gdaki_watch_load(volatile struct gdaki_copier_ctl *vc, struct gdaki_watch_table *t,
                                        unsigned int gen, unsigned int lane)
{
    const volatile unsigned long long *src = (const volatile unsigned long long *)&vc->watch[gen & 1][0];
    unsigned long long v[GDAKI_WATCH_MAX * GDAKI_WATCH_WORDS / 32];
    for (unsigned int k = 0; k < GDAKI_WATCH_MAX * GDAKI_WATCH_WORDS / 32; k++)
        v[k] = src[lane + 32 * k];
    unsigned long long old[3] = {0, 0, 0};
    if (lane < GDAKI_WATCH_MAX) {
        old[0] = t->w[lane].dbr;
        old[1] = t->w[lane].ring;
        old[2] = t->w[lane].mirror;
    }
    __syncwarp();
    unsigned long long *dst = (unsigned long long *)t->w;
    for (unsigned int k = 0; k < GDAKI_WATCH_MAX * GDAKI_WATCH_WORDS / 32; k++)
        dst[lane + 32 * k] = v[k];
    __syncwarp();
    if (lane < GDAKI_WATCH_MAX) {
        const struct gdaki_watch *w = &t->w[lane];
        if (w->dbr != 0 && (t->gen == ~0u || w->dbr != old[0] || w->ring != old[1] || w->mirror != old[2])) {
            const unsigned long long st = *(const volatile unsigned long long *)w->state;
            t->seq[lane] = (unsigned int)(st >> 16) + 1;
            t->full[lane] = 1;
        }
    }
    __syncwarp();
    if (lane == 0) {
        t->gen = gen;
        vc->watch_ack = gen;
        __threadfence_system();
    }
    __syncwarp();
}

// gdaki_watch_look looks at every watched counter once and pushes those
// that moved (block 1); it returns whether it pushed.
static __device__ bool gdaki_watch_look(struct gdaki_watch_table *t, unsigned int lane)
{
    bool pushed = false;
    for (unsigned int k = 0; k < GDAKI_WATCH_MAX; k++) {
        const struct gdaki_watch *w = &t->w[k];
        if (w->dbr == 0)
            continue;
        unsigned int v = 0;
        if (lane == 0)
            v = *(const volatile unsigned int *)w->dbr;
        v = __shfl_sync(0xffffffffu, v, 0);
        if (v == t->last[k] && !t->full[k])
            continue;
        gdaki_watch_push(w, v, t->last[k], t->full[k] != 0, t->seq[k], lane);
        __syncwarp();
        if (lane == 0) {
            t->last[k] = v;
            t->full[k] = 0;
            t->seq[k]++;
        }
        __syncwarp();
        pushed = true;
    }
    return pushed;
}

// Between the blocks of one instance, in device memory: block 0 passes on
// watch_gen as it sees it and the epoch that ended; block 1 when it last
// pushed (a push is work for block 0's idle time).
__device__ volatile unsigned int gdaki_watch_gen_g;
__device__ volatile unsigned int gdaki_copier_end_g;
__device__ volatile unsigned long long gdaki_watch_pushed_g;

// gdaki_watcher is block 1: the watches, until block 0 ends (one warp).
static __device__ void gdaki_watcher(volatile struct gdaki_copier_ctl *vc, unsigned int epoch, unsigned int lane,
                                     struct gdaki_watch_table &t)
{
    if (lane < GDAKI_WATCH_MAX) {
        t.w[lane].dbr = 0;
        t.last[lane] = 0;
        t.seq[lane] = 0;
        t.full[lane] = 0;
    }
    if (lane == 0)
        t.gen = ~0u;
    __syncwarp();
    unsigned int gen = 0;
    if (lane == 0)
        gen = vc->watch_gen;
    gen = __shfl_sync(0xffffffffu, gen, 0);
    gdaki_watch_load(vc, &t, gen, lane);
    while (gdaki_copier_end_g != epoch) {
        // Block 0's copy of watch_gen may be an earlier instance's until
        // its first look: only a newer generation is loaded.
        gen = gdaki_watch_gen_g;
        if ((int)(gen - t.gen) > 0)
            gdaki_watch_load(vc, &t, gen, lane);
        if (gdaki_watch_look(&t, lane)) {
            if (lane == 0)
                gdaki_watch_pushed_g = gdaki_copier_now();
        } else {
            // A short pause between looks that found nothing keeps the
            // watcher's loads from crowding the copier's (a push is late
            // by at most this much).
            __nanosleep(GDAKI_WATCH_PAUSE_NS);
        }
    }
    if (lane == 0) {
        __threadfence_system();
        vc->watch_exited = epoch;
        __threadfence_system();
    }
}

// gdaki_emu_copier serves batches until it has been idle for idle_ns, has
// run for life_ns, or the host cancels its epoch; it then records its epoch
// in `exited` and ends. The bounded life keeps a context synchronization
// (cuCtxSynchronize, an implicitly synchronizing cuMemFree) from waiting on
// it for more than life_ns. Block 1, when launched, runs the send-queue
// watches until block 0 ends; a push counts as work for idle_ns. Block 0
// never waits for block 1 (which may not be resident).
extern "C" __global__ void gdaki_emu_copier(struct gdaki_copier_ctl *c, unsigned int epoch,
                                            unsigned long long idle_ns, unsigned long long life_ns)
{
    volatile struct gdaki_copier_ctl *vc = c;
    // Declared here, not in gdaki_watcher: a static function's shared
    // variable gets a name with a hash of the source's path in the PTX,
    // and copier.ptx must not depend on where it was built.
    __shared__ struct gdaki_watch_table s_watch;
    if (blockIdx.x != 0) {
        if (blockIdx.x == 1 && threadIdx.x < 32)
            gdaki_watcher(vc, epoch, threadIdx.x, s_watch);
        return;
    }
    __shared__ unsigned int s_state, s_seq, s_n, s_ni, s_fast, s_host;
    __shared__ unsigned long long s_desc[3 * GDAKI_COPIER_MAX_DESC];
    __shared__ unsigned int s_inl[GDAKI_COPIER_INLINE_WORDS];
    unsigned int seen = vc->done;
    const unsigned long long t0 = gdaki_copier_now();
    if (threadIdx.x == 0) {
        vc->started = epoch;
        __threadfence_system();
    }
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
            // second round trip to fetch them. The batch's inline words,
            // after its descriptors, show the number too when they are its.
            const unsigned int lane = threadIdx.x;
            const volatile unsigned long long *cw = (const volatile unsigned long long *)c;
            unsigned int state = 0;
            while (state == 0) {
                const unsigned long long v = cw[lane];
                const unsigned long long post = __shfl_sync(0xffffffffu, v, 0);
                const unsigned long long w1 = __shfl_sync(0xffffffffu, v, 1);
                const unsigned int cancel = (unsigned int)w1;
                const unsigned int s = (unsigned int)post;
                if (lane == 0)
                    gdaki_watch_gen_g = (unsigned int)(w1 >> 32); // watch_gen, for block 1
                if (cancel == epoch) {
                    state = 2;
                } else if (s != seen) {
                    const unsigned int n = min((unsigned int)(post >> 32) & 0xffffu, (unsigned int)GDAKI_COPIER_MAX_DESC);
                    const unsigned int ni =
                        min((unsigned int)(post >> 48) & 0xffu, (unsigned int)GDAKI_COPIER_INLINE_WORDS);
                    const unsigned int w = lane - GDAKI_COPIER_DESC_WORD; // word of the descriptors (wraps below)
                    const bool mine = w < 3 * n && w < 3 * GDAKI_COPIER_FAST_DESC;
                    const bool inl = w >= 3 * n && w < 3 * n + ni;
                    const bool stale = ((mine && w % 3 == 2) || inl) && (unsigned int)(v >> 32) != s;
                    const bool fast = n <= GDAKI_COPIER_FAST_DESC &&
                                      GDAKI_COPIER_DESC_WORD + 3 * n + ni <= GDAKI_COPIER_LOOK_WORDS &&
                                      !__any_sync(0xffffffffu, stale);
                    if (fast && mine)
                        s_desc[w] = v;
                    if (fast && inl)
                        s_inl[w - 3 * n] = (unsigned int)v;
                    if (lane == 0) {
                        s_seq = s;
                        s_n = n;
                        s_ni = ni;
                        s_host = (unsigned int)(post >> 56) & 1u;
                        s_fast = fast;
                        // What the batch reads (descriptors, staged bytes)
                        // after the posted word.
                        __threadfence_system();
                    }
                    state = 1;
                } else {
                    unsigned int end = 0;
                    if (lane == 0) {
                        const unsigned long long now = gdaki_copier_now();
                        const unsigned long long pushed = gdaki_watch_pushed_g;
                        const unsigned long long busy = pushed > last && pushed < now ? pushed : last;
                        end = now - busy > idle_ns || now - t0 > life_ns;
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
        const unsigned int n = s_n, ni = s_ni;
        bool cancelled = false;
        if (!s_fast) {
            // Every thread loads a word of the descriptors: one round trip.
            const volatile unsigned long long *dw = (const volatile unsigned long long *)vc->d;
            for (unsigned int i = threadIdx.x; i < 3 * n; i += blockDim.x)
                s_desc[i] = dw[i];
            // And the inline words, again until each shows the batch's
            // number (they were stored before the posted word, so the
            // first load after it has them: the loop is a guard) or the
            // host cancels the instance. Both conditions are the block's
            // (barrier reductions), so every thread leaves together.
            bool again = ni != 0;
            while (again) {
                bool stale = false;
                for (unsigned int i = threadIdx.x; i < ni; i += blockDim.x) {
                    const unsigned long long v = dw[3 * n + i];
                    s_inl[i] = (unsigned int)v;
                    stale = stale || (unsigned int)(v >> 32) != s_seq;
                }
                again = __syncthreads_or(stale) != 0;
                if (again && __syncthreads_or(threadIdx.x == 0 && vc->cancel == epoch)) {
                    cancelled = true;
                    break;
                }
            }
        }
        __syncthreads();
        if (cancelled)
            break;
        const unsigned long long t_desc = gdaki_copier_now();
        for (unsigned int k = 0; k < n; k++) {
            const unsigned long long len = s_desc[3 * k + 2];
            if (len & GDAKI_COPIER_AFTER) {
                // The copies before this one wrote device memory: they are
                // visible to every thread of the GPU before this one starts
                // (a CQE's final op_own after its body), as on a stream.
                __syncthreads();
                __threadfence();
            }
            if (len & GDAKI_COPIER_INLINE) {
                // Its words from s_inl; a source outside the batch's
                // inline words (a host defect) copies nothing.
                const unsigned int first = (unsigned int)s_desc[3 * k] - (GDAKI_COPIER_DESC_WORD + 3 * n);
                const unsigned int bytes = (unsigned int)(len & GDAKI_COPIER_LEN);
                if (first < ni && (bytes + 3) / 4 <= ni - first)
                    gdaki_copier_inline(&s_inl[first], s_desc[3 * k + 1], bytes, threadIdx.x, blockDim.x);
                continue;
            }
            gdaki_copier_range(s_desc[3 * k], s_desc[3 * k + 1], len & GDAKI_COPIER_LEN, threadIdx.x, blockDim.x);
        }
        // Thread 0's fence, after the barrier, orders every thread's copies
        // before done (fences are cumulative). A batch that wrote host
        // memory (the arena) needs a system fence: the host reads what it
        // wrote once it sees done. One that wrote device memory alone needs
        // its writes visible to the GPU's threads (and copy engines, which
        // read through the same L2) by then: a GPU fence, about 0.5 us
        // cheaper on an H100. No fence follows done: the host posts the
        // next batch only once it saw done, so nothing of that batch can
        // overtake it.
        __syncthreads();
        seen = s_seq;
        if (threadIdx.x == 0) {
            if (s_host)
                __threadfence_system();
            else
                __threadfence();
            vc->t_seen = t_seen;
            vc->t_desc = t_desc;
            vc->t_copied = gdaki_copier_now();
            vc->done = seen;
            last = gdaki_copier_now();
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        gdaki_copier_end_g = epoch; // block 1 ends too
        __threadfence_system();
        vc->exited = epoch;
        __threadfence_system();
    }
}
