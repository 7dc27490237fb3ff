/*
 * twosided_lat device code: a SEND/receive ping-pong between two GPUs over one RC QP a side (the
 * two-sided counterpart of write_lat).
 *
 * Built by `make kernels` into build/kernels/twosided_lat_kernel.fatbin and launched from Go
 * (examples/twosided_lat) through the CUDA driver API; the entry points are extern "C" and take
 * only plain arguments. One block of one warp. Lane 0 alone drives the QP, in thread scope
 * (EXCLUSIVE sharing: nothing else uses it): it posts the receives and the SENDs and waits for
 * their completions. The 32 lanes together write the payload (client) and check it (server), both
 * while a message is in flight, so that neither adds to the round trip.
 *
 * Messages are numbered across every launch on the QPs: a launch sends seq = base + 1 .. base +
 * num_iters, the host passing base = the number of messages exchanged before it (launch k of
 * num_iters messages: k * num_iters). Message seq and its reply each use the receive of RQ index
 * seq - 1 on the side that receives it, posted into half (seq & 1) of that side's receive buffer
 * (two halves of `stride` bytes). Every receive is posted for `stride` bytes, the largest message,
 * so that a receive posted in one launch takes the message of the next whatever its size; the
 * receive CQE's byte count must equal the message size.
 *
 * Receive ordering. A SEND must never find its receive missing (that would draw an RNR NAK), so
 * every receive is posted before the peer can send into it:
 *  - before the first message (base 0) each side posts the receives of messages 1 and 2; the server
 *    then RDMA-writes 1 into the client's flag word, and the client's kernel waits for that flag
 *    before its first SEND;
 *  - client, message seq: SEND seq, post the receive of reply seq + 2, wait for reply seq;
 *  - server, message seq: wait for the receive of seq, SEND the reply, post the receive of seq + 2.
 * The client sends seq + 1 only once it has reply seq, and the server sends reply seq only after
 * it posted the receive of seq + 1 (in message seq - 1, or before the first message); the server
 * sends reply seq only once message seq arrived, after the client posted the receive of reply seq
 * (in message seq - 2, or before the first message). Each side has at most two receives
 * outstanding. The two posted last in a launch serve the first two messages of the next launch.
 *
 * Buffers. The server replies with the message it received (the SEND reads its receive half), then
 * posts the receive of seq + 2 into that same half and checks the bytes there: message seq + 2 can
 * only come after reply seq + 1, which the server sends after the check. The client sends message
 * seq from half (seq & 1) of its send buffer and fills the other half with message seq + 1 while
 * seq is in flight, after the SEND that last read that half (message seq - 1) has completed. The
 * client does not read what it receives.
 *
 * Payload: byte p of message seq of size bytes is (uint8_t)(seq * 3 + ((uint32_t)size * 2654435761
 * >> 24) + p) (the same function as the Go program's pattern). The server counts the messages with
 * a wrong byte in *bad and records the first wrong byte ever seen in *where as ((pos + 1) << 8) |
 * value.
 *
 * Every wait is bounded: it gives up after timeout_ns (0: never) and reports it in *status, as does
 * an error completion, so a dead peer or a lost message ends the kernel with a status, never a
 * hang. Status bits: 1 timed out (the peer's message, its flag or a completion), 2 error completion
 * (or the QP had already failed), 4 a receive with a byte count other than the message size (the
 * run goes on), 8 a receive index other than expected (the QP's receive queue was used before),
 * 16 launched with another geometry than one block of 32 threads.
 */
#include <doca_gpunetio_dev_verbs_twosided.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>

#define TWOSIDED_LAT_TIMED_OUT 1u
#define TWOSIDED_LAT_ERROR_CQE 2u
#define TWOSIDED_LAT_BAD_LENGTH 4u
#define TWOSIDED_LAT_OUT_OF_STEP 8u
#define TWOSIDED_LAT_BAD_LAUNCH 16u
/* The bits that end the run: the protocol cannot go on. */
#define TWOSIDED_LAT_FATAL (TWOSIDED_LAT_TIMED_OUT | TWOSIDED_LAT_ERROR_CQE | TWOSIDED_LAT_OUT_OF_STEP)

#define TWOSIDED_LAT_THREADS 32u
#define TWOSIDED_LAT_NO_POS 0xffffffffu /* no wrong byte (NVRTC has no UINT32_MAX) */
#define TWOSIDED_LAT_FULL_MASK 0xffffffffu
#define TWOSIDED_LAT_RSM DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE
#define TWOSIDED_LAT_NIC DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO
#define TWOSIDED_LAT_SCOPE DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD

/* ---- Payload ---------------------------------------------------------------------------------- */

/* The byte at position 0 of message seq of size bytes; the byte at p is this plus p (mod 256). */
__device__ static __forceinline__ uint8_t twosided_lat_pattern(uint64_t seq, uint64_t size)
{
	return (uint8_t)((uint32_t)seq * 3u + (((uint32_t)size * 2654435761u) >> 24));
}

/* The 16 bytes b, b+1, ..., b+15 (mod 256), little-endian. */
__device__ static __forceinline__ uint4 twosided_lat_chunk(uint8_t b)
{
	const uint32_t s = (uint32_t)b * 0x01010101u;
	return make_uint4(__vadd4(s, 0x03020100u), __vadd4(s, 0x07060504u), __vadd4(s, 0x0b0a0908u),
			  __vadd4(s, 0x0f0e0d0cu));
}

/* Warp: writes message seq (size bytes) into buf (16-byte aligned), then makes the stores visible
 * to the NIC before anything the lanes do after it. */
__device__ static __forceinline__ void twosided_lat_fill(uint8_t *buf, uint64_t size, uint64_t seq, unsigned int lane)
{
	const uint8_t b = twosided_lat_pattern(seq, size);
	const uint64_t chunks = size / 16;
	for (uint64_t c = lane; c < chunks; c += TWOSIDED_LAT_THREADS)
		((uint4 *)buf)[c] = twosided_lat_chunk((uint8_t)(b + 16 * c));
	for (uint64_t p = chunks * 16 + lane; p < size; p += TWOSIDED_LAT_THREADS)
		buf[p] = (uint8_t)(b + p);
	__threadfence_system();
}

/* Warp: checks message seq (size bytes) in buf (16-byte aligned); returns the first wrong position
 * among this lane's bytes (*got its value), or TWOSIDED_LAT_NO_POS. Loads skip the L1 (ld.cv): the
 * NIC wrote the buffer since the lanes last read it. */
__device__ static __forceinline__ uint32_t twosided_lat_check(const uint8_t *buf, uint64_t size, uint64_t seq,
							       unsigned int lane, uint8_t *got)
{
	const uint8_t b = twosided_lat_pattern(seq, size);
	const uint64_t chunks = size / 16;
	uint32_t diff = 0;
	/* Fast pass: no branch on the data, so the loads of a lane go out back to back. */
#pragma unroll 4
	for (uint64_t c = lane; c < chunks; c += TWOSIDED_LAT_THREADS) {
		const uint4 v = __ldcv((const uint4 *)buf + c);
		const uint4 w = twosided_lat_chunk((uint8_t)(b + 16 * c));
		diff |= (v.x ^ w.x) | (v.y ^ w.y) | (v.z ^ w.z) | (v.w ^ w.w);
	}
	for (uint64_t p = chunks * 16 + lane; p < size; p += TWOSIDED_LAT_THREADS)
		diff |= (uint32_t)(uint8_t)(__ldcv(buf + p) ^ (uint8_t)(b + p));
	if (diff == 0)
		return TWOSIDED_LAT_NO_POS;
	/* Slow pass, only for a lane that saw a difference: the first wrong byte of its share (its
	 * chunks in order, then its tail bytes, which come after every chunk). */
	for (uint64_t c = lane; c < chunks; c += TWOSIDED_LAT_THREADS) {
		for (uint32_t k = 0; k < 16; k++) {
			const uint64_t p = 16 * c + k;
			const uint8_t v = __ldcv(buf + p);
			if (v != (uint8_t)(b + p)) {
				*got = v;
				return (uint32_t)p;
			}
		}
	}
	for (uint64_t p = chunks * 16 + lane; p < size; p += TWOSIDED_LAT_THREADS) {
		const uint8_t v = __ldcv(buf + p);
		if (v != (uint8_t)(b + p)) {
			*got = v;
			return (uint32_t)p;
		}
	}
	return TWOSIDED_LAT_NO_POS; /* the byte changed between the passes: not a message of this run */
}

/* ---- Bounded waits (lane 0) --------------------------------------------------------------------- */

/* Spins on probe() (one look at a completion: 0 done, EBUSY not yet, negative failed) until it is
 * not EBUSY, for at most timeout_ns (0: no bound). Returns 0 or a status bit. */
template <typename Probe>
__device__ static __forceinline__ unsigned int twosided_lat_wait(Probe probe, uint64_t timeout_ns)
{
	int r = probe();
	if (r == EBUSY) {
		const uint64_t t0 = doca_gpu_dev_verbs_query_globaltimer();
		do {
			if (timeout_ns != 0 && doca_gpu_dev_verbs_query_globaltimer() - t0 > timeout_ns)
				return TWOSIDED_LAT_TIMED_OUT;
			r = probe();
		} while (r == EBUSY);
	}
	if (r == 0)
		return 0;
	return r == -ETIMEDOUT ? TWOSIDED_LAT_TIMED_OUT : TWOSIDED_LAT_ERROR_CQE;
}

/* Waits for the completion of SQ index ticket (a SEND or the flag write). */
__device__ static __forceinline__ unsigned int twosided_lat_wait_send(struct doca_gpu_dev_verbs_qp *qp,
								      doca_gpu_dev_verbs_ticket_t ticket,
								      uint64_t timeout_ns)
{
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);
	return twosided_lat_wait([&] { return doca_gpu_dev_verbs_poll_one_cq_at<TWOSIDED_LAT_RSM>(cq, ticket); },
				 timeout_ns);
}

/* Waits for the receive of RQ index ticket (non-blocking polls of the receive CQ, which consume
 * the CQE once it is there) and checks its byte count. */
__device__ static __forceinline__ unsigned int twosided_lat_wait_recv(struct doca_gpu_dev_verbs_qp *qp,
								      doca_gpu_dev_verbs_ticket_t ticket, uint64_t size,
								      uint64_t timeout_ns)
{
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_rq(qp);
	struct mlx5_cqe64 *cqe = NULL;
	const unsigned int st = twosided_lat_wait(
		[&] {
			return doca_gpu_dev_verbs_poll_cq<TWOSIDED_LAT_RSM, DOCA_GPUNETIO_VERBS_QP_RQ,
							  DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>(cq, ticket, &cqe);
		},
		timeout_ns);
	if (st != 0)
		return st;
	return doca_gpu_dev_verbs_cqe_get_bytes(cqe) == size ? 0u : TWOSIDED_LAT_BAD_LENGTH;
}

/* Posts a receive of stride bytes into half (seq & 1) of rx for message seq, whose RQ index must
 * be seq - 1. */
__device__ static __forceinline__ unsigned int twosided_lat_post_recv(struct doca_gpu_dev_verbs_qp *qp, uint8_t *rx,
								      uint32_t rx_lkey_be, uint64_t stride, uint64_t seq)
{
	const struct doca_gpu_dev_verbs_addr dst = {(uint64_t)(uintptr_t)(rx + (seq & 1) * stride), rx_lkey_be};
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_recv<TWOSIDED_LAT_RSM, TWOSIDED_LAT_NIC, TWOSIDED_LAT_SCOPE>(qp, dst, (size_t)stride, &ticket);
	return ticket == seq - 1 ? 0u : TWOSIDED_LAT_OUT_OF_STEP;
}

/* Whether the launch is the one block of one warp the protocol needs; thread 0 of block 0 reports
 * any other geometry. */
__device__ static __forceinline__ bool twosided_lat_geometry(unsigned int *status)
{
	if (gridDim.x == 1 && gridDim.y == 1 && gridDim.z == 1 && blockDim.x == TWOSIDED_LAT_THREADS &&
	    blockDim.y == 1 && blockDim.z == 1)
		return true;
	if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && threadIdx.y == 0 &&
	    threadIdx.z == 0)
		atomicOr(status, TWOSIDED_LAT_BAD_LAUNCH);
	return false;
}

/* ---- Server ------------------------------------------------------------------------------------ */

extern "C" __global__ void twosided_lat_server(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters, uint64_t size,
						uint64_t base, uint8_t *rx, uint32_t rx_lkey_be, uint64_t stride,
						uint64_t flag_raddr, uint32_t flag_rkey_be, uint64_t timeout_ns,
						unsigned int *status, unsigned int *bad, unsigned int *where)
{
	if (!twosided_lat_geometry(status))
		return;
	const unsigned int lane = threadIdx.x;
	unsigned int st = 0;     /* lane 0's status, broadcast after each step that can fail */
	unsigned int sticky = 0; /* bits that do not end the run */
	doca_gpu_dev_verbs_ticket_t prev = 0;

	if (base == 0) {
		/* The receives of messages 1 and 2, then the client's go. */
		if (lane == 0) {
			st = twosided_lat_post_recv(qp, rx, rx_lkey_be, stride, 1) |
			     twosided_lat_post_recv(qp, rx, rx_lkey_be, stride, 2);
			if (st == 0) {
				const struct doca_gpu_dev_verbs_addr flag = {flag_raddr, flag_rkey_be};
				doca_gpu_dev_verbs_ticket_t ticket;
				doca_gpu_dev_verbs_p<uint64_t, TWOSIDED_LAT_RSM, TWOSIDED_LAT_NIC>(qp, flag, (uint64_t)1, &ticket);
				st = twosided_lat_wait_send(qp, ticket, timeout_ns);
			}
		}
		st = __shfl_sync(TWOSIDED_LAT_FULL_MASK, st, 0);
	}

	for (uint32_t j = 0; j < num_iters && (st & TWOSIDED_LAT_FATAL) == 0; j++) {
		const uint64_t seq = base + 1 + j;
		uint8_t *msg = rx + (seq & 1) * stride;
		if (lane == 0) {
			st = twosided_lat_wait_recv(qp, seq - 1, size, timeout_ns);
			if ((st & TWOSIDED_LAT_FATAL) == 0) {
				/* The reply first: the rest is off the round trip. */
				const struct doca_gpu_dev_verbs_addr src = {(uint64_t)(uintptr_t)msg, rx_lkey_be};
				doca_gpu_dev_verbs_ticket_t ticket;
				doca_gpu_dev_verbs_send<TWOSIDED_LAT_RSM, TWOSIDED_LAT_NIC, TWOSIDED_LAT_SCOPE>(qp, src, (size_t)size,
														  &ticket);
				st |= twosided_lat_post_recv(qp, rx, rx_lkey_be, stride, seq + 2);
				if (j > 0 && (st & TWOSIDED_LAT_FATAL) == 0)
					st |= twosided_lat_wait_send(qp, prev, timeout_ns);
				prev = ticket;
				if ((st & TWOSIDED_LAT_FATAL) == 0) {
					/* With the QP's need_mcst set (the GPU does not see GPUDirect RDMA writes in
					 * order), a DUMP after the receive makes its bytes visible; else nothing. */
					const struct doca_gpu_dev_verbs_addr dump = {(uint64_t)(uintptr_t)msg, rx_lkey_be};
					doca_gpu_dev_verbs_wait_recv<TWOSIDED_LAT_SCOPE, TWOSIDED_LAT_RSM, TWOSIDED_LAT_NIC>(qp, seq - 1,
															      dump);
				}
			}
		}
		st = __shfl_sync(TWOSIDED_LAT_FULL_MASK, st, 0);
		sticky |= st & ~TWOSIDED_LAT_FATAL;
		if (st & TWOSIDED_LAT_FATAL)
			break;
		/* Lane 0's poll saw the CQE (and fenced): the warp barrier orders the other lanes after
		 * it, and each lane's acquire fence orders its loads after the barrier. */
		__syncwarp();
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		uint8_t got = 0;
		const uint32_t pos = twosided_lat_check(msg, size, seq, lane, &got);
		uint32_t first = pos;
		for (int o = 16; o > 0; o >>= 1)
			first = min(first, __shfl_xor_sync(TWOSIDED_LAT_FULL_MASK, first, o));
		if (first != TWOSIDED_LAT_NO_POS) {
			if (pos == first)
				atomicCAS(where, 0u, ((first + 1) << 8) | got);
			if (lane == 0)
				atomicAdd(bad, 1u);
		}
		__syncwarp();
	}
	if (lane == 0) {
		if ((st & TWOSIDED_LAT_FATAL) == 0 && num_iters > 0)
			st |= twosided_lat_wait_send(qp, prev, timeout_ns);
		st |= sticky;
		if (st != 0)
			atomicOr(status, st);
	}
}

/* ---- Client ------------------------------------------------------------------------------------ */

extern "C" __global__ void twosided_lat_client(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters, uint64_t size,
						uint64_t base, uint8_t *rx, uint32_t rx_lkey_be, uint8_t *tx,
						uint32_t tx_lkey_be, uint64_t stride, const uint64_t *flag,
						uint64_t timeout_ns, unsigned int *status)
{
	if (!twosided_lat_geometry(status))
		return;
	const unsigned int lane = threadIdx.x;
	unsigned int st = 0;
	unsigned int sticky = 0;
	doca_gpu_dev_verbs_ticket_t prev = 0;

	if (base == 0 && lane == 0) {
		/* The receives of replies 1 and 2, then the server's go: its receives are posted. */
		st = twosided_lat_post_recv(qp, rx, rx_lkey_be, stride, 1) |
		     twosided_lat_post_recv(qp, rx, rx_lkey_be, stride, 2);
		const uint64_t t0 = doca_gpu_dev_verbs_query_globaltimer();
		while (st == 0 && DOCA_GPUNETIO_VOLATILE(*flag) < 1) {
			if (timeout_ns != 0 && doca_gpu_dev_verbs_query_globaltimer() - t0 > timeout_ns)
				st = TWOSIDED_LAT_TIMED_OUT;
		}
	}
	st = __shfl_sync(TWOSIDED_LAT_FULL_MASK, st, 0);
	if (st == 0 && num_iters > 0) {
		/* The first message of the launch; the SEND that last read this half completed in the
		 * previous launch. */
		twosided_lat_fill(tx + ((base + 1) & 1) * stride, size, base + 1, lane);
		__syncwarp();
	}

	for (uint32_t j = 0; j < num_iters && (st & TWOSIDED_LAT_FATAL) == 0; j++) {
		const uint64_t seq = base + 1 + j;
		if (lane == 0) {
			const struct doca_gpu_dev_verbs_addr src = {(uint64_t)(uintptr_t)(tx + (seq & 1) * stride), tx_lkey_be};
			doca_gpu_dev_verbs_ticket_t ticket;
			doca_gpu_dev_verbs_send<TWOSIDED_LAT_RSM, TWOSIDED_LAT_NIC, TWOSIDED_LAT_SCOPE>(qp, src, (size_t)size,
													  &ticket);
			st = twosided_lat_post_recv(qp, rx, rx_lkey_be, stride, seq + 2);
			/* The SEND of seq - 1 read the half the next message goes into. */
			if (j > 0 && st == 0)
				st = twosided_lat_wait_send(qp, prev, timeout_ns);
			prev = ticket;
		}
		st = __shfl_sync(TWOSIDED_LAT_FULL_MASK, st, 0);
		if (st & TWOSIDED_LAT_FATAL)
			break;
		if (j + 1 < num_iters)
			twosided_lat_fill(tx + ((seq + 1) & 1) * stride, size, seq + 1, lane);
		__syncwarp();
		if (lane == 0) {
			st = twosided_lat_wait_recv(qp, seq - 1, size, timeout_ns);
			/* No reply: one look at the SEND, which failed if the server had no receive posted
			 * (RNR) or the link is gone. */
			if ((st & TWOSIDED_LAT_TIMED_OUT) &&
			    doca_gpu_dev_verbs_poll_one_cq_at<TWOSIDED_LAT_RSM>(doca_gpu_dev_verbs_qp_get_cq_sq(qp), prev) ==
				    -EIO)
				st |= TWOSIDED_LAT_ERROR_CQE;
		}
		st = __shfl_sync(TWOSIDED_LAT_FULL_MASK, st, 0);
		sticky |= st & ~TWOSIDED_LAT_FATAL;
	}
	if (lane == 0) {
		if ((st & TWOSIDED_LAT_FATAL) == 0 && num_iters > 0)
			st |= twosided_lat_wait_send(qp, prev, timeout_ns);
		st |= sticky;
		if (st != 0)
			atomicOr(status, st);
	}
}
