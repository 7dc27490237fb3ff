// C wrappers over the host-compiled GPUNetIO device headers (see devhost.h).
#include <stdint.h>
#include <string.h>
#include <utility>

extern "C" void devhost_store_hook(void *addr, uint64_t value, int bytes);
#define DOCA_GPUNETIO_VERBS_HOST_STORE_HOOK devhost_store_hook

#include <doca_gpunetio_device.h>
#include "devhost.h"

namespace {

template <enum doca_gpu_dev_verbs_resource_sharing_mode R, enum doca_gpu_dev_verbs_nic_handler N>
struct modes {
	static constexpr enum doca_gpu_dev_verbs_resource_sharing_mode rsm = R;
	static constexpr enum doca_gpu_dev_verbs_nic_handler nic = N;
};

template <enum doca_gpu_dev_verbs_resource_sharing_mode R, typename F>
void with_nic(int nic, F &&f)
{
	switch (nic) {
	case DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY:
		f(modes<R, DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY>{});
		break;
	case DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB:
		f(modes<R, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB>{});
		break;
	case DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF:
		f(modes<R, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF>{});
		break;
	case DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR:
		f(modes<R, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR>{});
		break;
	default:
		f(modes<R, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>{});
		break;
	}
}

// Invokes f(modes<RSM, NIC>{}) for the runtime sharing mode and handler.
template <typename F>
void with_modes(int rsm, int nic, F &&f)
{
	switch (rsm) {
	case DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE:
		with_nic<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(nic, f);
		break;
	case DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA:
		with_nic<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA>(nic, f);
		break;
	default:
		with_nic<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(nic, f);
		break;
	}
}

template <typename F>
void with_rsm(int rsm, F &&f)
{
	with_modes(rsm, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, f);
}

template <enum doca_gpu_dev_verbs_signal_op S>
struct sigop {
	static constexpr enum doca_gpu_dev_verbs_signal_op op = S;
};

// Invokes f(sigop<OP>{}) for the runtime signal operation (1: the SET extension, else ADD).
template <typename F>
void with_sig(int sig_op, F &&f)
{
	if (sig_op == GDAKI_VERBS_SIGNAL_OP_SET)
		f(sigop<GDAKI_VERBS_SIGNAL_OP_SET>{});
	else
		f(sigop<DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD>{});
}

struct doca_gpu_dev_verbs_wqe *W(void *p)
{
	return (struct doca_gpu_dev_verbs_wqe *)p;
}

enum doca_gpu_dev_verbs_wqe_ctrl_flags F(uint32_t f)
{
	return (enum doca_gpu_dev_verbs_wqe_ctrl_flags)f;
}

struct doca_gpu_dev_verbs_addr A(uint64_t addr, uint32_t key)
{
	struct doca_gpu_dev_verbs_addr a = {addr, key};
	return a;
}

template <size_t N>
struct blob {
	uint8_t b[N];
};

template <size_t N>
void inl_data(struct doca_gpu_dev_verbs_qp *qp, void *wqe, const void *data)
{
	blob<N> v;
	memcpy(v.b, data, N);
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<blob<N>>(qp, W(wqe), v);
}

template <size_t... I>
int inl_data_n(size_t size, struct doca_gpu_dev_verbs_qp *qp, void *wqe, const void *data, std::index_sequence<I...>)
{
	int done = 0;
	((size == I + 1 ? (inl_data<I + 1>(qp, wqe, data), done = 1) : 0), ...);
	return done;
}

} // namespace

extern "C" {

void devhost_prepare_nop(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags)
{
	doca_gpu_dev_verbs_wqe_prepare_nop(qp, W(wqe), idx, F(flags));
}

void devhost_prepare_write(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t opcode, uint32_t flags,
			   uint32_t imm, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t bytes)
{
	doca_gpu_dev_verbs_wqe_prepare_write(qp, W(wqe), idx, opcode, F(flags), imm, raddr, rkey, laddr, lkey, bytes);
}

void devhost_prepare_write2(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t opcode, uint32_t flags,
			    uint32_t imm, uint64_t raddr, uint32_t rkey, uint64_t laddr0, uint32_t lkey0, uint32_t bytes0,
			    uint64_t laddr1, uint32_t lkey1, uint32_t bytes1)
{
	doca_gpu_dev_verbs_wqe_prepare_write(qp, W(wqe), idx, opcode, F(flags), imm, raddr, rkey, laddr0, lkey0, bytes0,
					     laddr1, lkey1, bytes1);
}

void devhost_prepare_inl_header(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags,
				uint64_t raddr, uint32_t rkey, uint32_t bytes)
{
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(qp, W(wqe), idx, F(flags), raddr, rkey, bytes);
}

int devhost_prepare_inl_data(struct doca_gpu_dev_verbs_qp *qp, void *wqe, const void *data, uint32_t size)
{
	return inl_data_n(size, qp, wqe, data, std::make_index_sequence<DOCA_GPUNETIO_VERBS_MAX_INLINE_SIZE>{}) ? 0 : -1;
}

void devhost_prepare_write_inl(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags,
			       uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t bytes)
{
	doca_gpu_dev_verbs_wqe_prepare_write_inl(qp, W(wqe), idx, F(flags), raddr, rkey, laddr, bytes);
}

void devhost_prepare_read(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags, uint64_t raddr,
			  uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t bytes)
{
	doca_gpu_dev_verbs_wqe_prepare_read(qp, W(wqe), idx, F(flags), raddr, rkey, laddr, lkey, bytes);
}

void devhost_prepare_read2(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags, uint64_t raddr,
			   uint32_t rkey, uint64_t laddr0, uint32_t lkey0, uint32_t bytes0, uint64_t laddr1,
			   uint32_t lkey1, uint32_t bytes1)
{
	doca_gpu_dev_verbs_wqe_prepare_read(qp, W(wqe), idx, F(flags), raddr, rkey, laddr0, lkey0, bytes0, laddr1, lkey1,
					    bytes1);
}

void devhost_prepare_atomic(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t opcode, uint32_t flags,
			    uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t bytes,
			    uint64_t compare_add, uint64_t swap_add)
{
	doca_gpu_dev_verbs_wqe_prepare_atomic(qp, W(wqe), idx, opcode, F(flags), raddr, rkey, laddr, lkey, bytes,
					      compare_add, swap_add);
}

void devhost_prepare_atomic_ext(struct doca_gpu_dev_verbs_qp *qp, void *wqe0, void *wqe1, int bytes8, uint16_t idx,
				uint32_t opcode, uint32_t flags, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				uint32_t lkey, uint64_t add_data, uint64_t field_boundary, uint64_t swap_data,
				uint64_t compare_data, uint64_t swap_mask, uint64_t compare_mask)
{
	if (bytes8)
		doca_gpu_dev_verbs_wqe_prepare_atomic_ext<DOCA_GPUNETIO_VERBS_ATOMIC_EXT_BYTES_8>(
			qp, W(wqe0), W(wqe1), idx, opcode, F(flags), raddr, rkey, laddr, lkey, add_data, field_boundary,
			swap_data, compare_data, swap_mask, compare_mask);
	else
		doca_gpu_dev_verbs_wqe_prepare_atomic_ext(qp, W(wqe0), W(wqe1), idx, opcode, F(flags), raddr, rkey, laddr,
							  lkey, add_data, field_boundary, swap_data, compare_data,
							  swap_mask, compare_mask);
}

void devhost_prepare_wait(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags,
			  uint32_t max_index, uint32_t qpn_cqn)
{
	doca_gpu_dev_verbs_wqe_prepare_wait(qp, W(wqe), idx, F(flags), max_index, qpn_cqn);
}

void devhost_prepare_dump(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags, uint64_t laddr,
			  uint32_t lkey, uint32_t bytes)
{
	doca_gpu_dev_verbs_wqe_prepare_dump(qp, W(wqe), idx, F(flags), laddr, lkey, bytes);
}

void *devhost_get_wqe_ptr(struct doca_gpu_dev_verbs_qp *qp, uint16_t idx)
{
	return (void *)doca_gpu_dev_verbs_get_wqe_ptr(qp, idx);
}

uint64_t devhost_prepare_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi)
{
	return (uint64_t)doca_gpu_dev_verbs_prepare_db(qp, pi);
}

uint32_t devhost_prepare_dbr(uint32_t pi)
{
	return (uint32_t)doca_gpu_dev_verbs_prepare_dbr(pi);
}

uint64_t devhost_reserve(struct doca_gpu_dev_verbs_qp *qp, uint32_t count, int rsm, uint32_t code_opt)
{
	uint64_t base = 0;
	with_rsm(rsm, [&](auto m) {
		base = doca_gpu_dev_verbs_reserve_wq_slots<decltype(m)::rsm>(qp, count, code_opt);
	});
	return base;
}

void devhost_mark_ready(struct doca_gpu_dev_verbs_qp *qp, uint64_t from, uint64_t to, int rsm, int ready_mode)
{
	with_rsm(rsm, [&](auto m) {
		constexpr auto R = decltype(m)::rsm;
		switch (ready_mode) {
		case DOCA_GPUNETIO_VERBS_READY_MODE_DEFAULT:
			doca_gpu_dev_verbs_mark_wqes_ready<R, DOCA_GPUNETIO_VERBS_QP_SQ,
							   DOCA_GPUNETIO_VERBS_READY_MODE_DEFAULT>(qp, from, to);
			break;
		case DOCA_GPUNETIO_VERBS_READY_MODE_LD_ST:
			doca_gpu_dev_verbs_mark_wqes_ready<R, DOCA_GPUNETIO_VERBS_QP_SQ,
							   DOCA_GPUNETIO_VERBS_READY_MODE_LD_ST>(qp, from, to);
			break;
		default:
			doca_gpu_dev_verbs_mark_wqes_ready<R>(qp, from, to);
			break;
		}
	});
}

void devhost_submit(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi, int rsm, int nic, uint32_t code_opt)
{
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		doca_gpu_dev_verbs_submit<M::rsm, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, M::nic>(qp, pi, code_opt);
	});
}

void devhost_update_dbr(struct doca_gpu_dev_verbs_qp *qp, uint32_t pi)
{
	doca_gpu_dev_verbs_update_dbr(qp, pi);
}

void devhost_ring_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi)
{
	doca_gpu_dev_verbs_ring_db(qp, pi);
}

void devhost_ring_proxy(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi, int rsm)
{
	with_rsm(rsm, [&](auto m) { doca_gpu_dev_verbs_ring_proxy<decltype(m)::rsm>(qp, pi); });
}

int devhost_poll_one_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t ci, int rsm)
{
	int r = 0;
	with_rsm(rsm, [&](auto m) { r = doca_gpu_dev_verbs_poll_one_cq_at<decltype(m)::rsm>(cq, ci); });
	return r;
}

int devhost_poll_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t ci, int rsm)
{
	int r = 0;
	with_rsm(rsm, [&](auto m) { r = doca_gpu_dev_verbs_poll_cq_at<decltype(m)::rsm>(cq, ci); });
	return r;
}

int devhost_poll_cq_collapsed_at(struct doca_gpu_dev_verbs_qp *qp, uint64_t ci, int rsm)
{
	int r = 0;
	with_rsm(rsm, [&](auto m) { r = doca_gpu_dev_verbs_poll_cq_collapsed_at<decltype(m)::rsm>(qp, ci); });
	return r;
}

int devhost_poll_cq(struct doca_gpu_dev_verbs_cq *cq, uint32_t count, int rsm)
{
	int r = 0;
	with_rsm(rsm, [&](auto m) { r = doca_gpu_dev_verbs_poll_cq<decltype(m)::rsm>(cq, count); });
	return r;
}

uint32_t devhost_cq_update_dbrec(struct doca_gpu_dev_verbs_cq *cq, uint32_t n, int is_overrun)
{
	if (is_overrun)
		return doca_gpu_dev_verbs_cq_update_dbrec<true>(cq, n);
	return doca_gpu_dev_verbs_cq_update_dbrec<false>(cq, n);
}

uint64_t devhost_put(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
		     uint64_t size, int rsm, int nic, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		doca_gpu_dev_verbs_put<M::rsm, M::nic>(qp, A(raddr, rkey), A(laddr, lkey), size, &t, code_opt);
	});
	return t;
}

uint64_t devhost_p(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t value, uint32_t size,
		   int rsm, int nic, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		switch (size) {
		case 1:
			doca_gpu_dev_verbs_p<uint8_t, M::rsm, M::nic>(qp, A(raddr, rkey), (uint8_t)value, &t, code_opt);
			break;
		case 2:
			doca_gpu_dev_verbs_p<uint16_t, M::rsm, M::nic>(qp, A(raddr, rkey), (uint16_t)value, &t, code_opt);
			break;
		case 4:
			doca_gpu_dev_verbs_p<uint32_t, M::rsm, M::nic>(qp, A(raddr, rkey), (uint32_t)value, &t, code_opt);
			break;
		default:
			doca_gpu_dev_verbs_p<uint64_t, M::rsm, M::nic>(qp, A(raddr, rkey), value, &t, code_opt);
			break;
		}
	});
	return t;
}

uint64_t devhost_put_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			    uint32_t lkey, uint64_t size, uint64_t sig_raddr, uint32_t sig_rkey, uint64_t sig_laddr,
			    uint32_t sig_lkey, uint64_t sig_val, int sig_op, int rsm, int nic, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_sig(sig_op, [&](auto so) {
		with_modes(rsm, nic, [&](auto m) {
			using M = decltype(m);
			doca_gpu_dev_verbs_put_signal<decltype(so)::op, M::rsm, M::nic>(
				qp, A(raddr, rkey), A(laddr, lkey), size, A(sig_raddr, sig_rkey), A(sig_laddr, sig_lkey),
				sig_val, &t, code_opt);
		});
	});
	return t;
}

uint64_t devhost_p_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t value,
			  uint64_t sig_raddr, uint32_t sig_rkey, uint64_t sig_laddr, uint32_t sig_lkey,
			  uint64_t sig_val, int sig_op, int rsm, int nic, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_sig(sig_op, [&](auto so) {
		with_modes(rsm, nic, [&](auto m) {
			using M = decltype(m);
			doca_gpu_dev_verbs_p_signal<uint64_t, decltype(so)::op, M::rsm, M::nic>(
				qp, A(raddr, rkey), value, A(sig_raddr, sig_rkey), A(sig_laddr, sig_lkey), sig_val, &t,
				code_opt);
		});
	});
	return t;
}

uint64_t devhost_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t sig_raddr, uint32_t sig_rkey, uint64_t sig_laddr,
			uint32_t sig_lkey, uint64_t sig_val, int sig_op, int rsm, int nic, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_sig(sig_op, [&](auto so) {
		with_modes(rsm, nic, [&](auto m) {
			using M = decltype(m);
			doca_gpu_dev_verbs_signal<decltype(so)::op, M::rsm, M::nic>(qp, A(sig_raddr, sig_rkey),
										   A(sig_laddr, sig_lkey), sig_val, &t,
										   code_opt);
		});
	});
	return t;
}

uint64_t devhost_fetch_add(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
			   uint64_t value, int rsm, int nic, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		gdaki_dev_fetch_add<M::rsm, M::nic>(qp, A(raddr, rkey), A(laddr, lkey), value, &t, code_opt);
	});
	return t;
}

uint64_t devhost_compare_swap(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			      uint32_t lkey, uint64_t compare, uint64_t swap, int rsm, int nic, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		gdaki_dev_compare_swap<M::rsm, M::nic>(qp, A(raddr, rkey), A(laddr, lkey), compare, swap, &t, code_opt);
	});
	return t;
}

int devhost_fetch_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticket, uint64_t laddr, uint32_t lkey, uint64_t *old,
		       int rsm)
{
	int r = 0;
	with_rsm(rsm, [&](auto m) { r = gdaki_dev_fetch_wait<decltype(m)::rsm>(qp, ticket, A(laddr, lkey), old); });
	return r;
}

int devhost_quiet(struct doca_gpu_dev_verbs_qp *qp, int rsm)
{
	int r = 0;
	with_rsm(rsm, [&](auto m) { r = gdaki_dev_quiet<decltype(m)::rsm>(qp); });
	return r;
}

uint64_t devhost_fence_ext(struct doca_gpu_dev_verbs_qp *qp, int rsm, int nic, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		gdaki_dev_fence<M::rsm, M::nic>(qp, &t, code_opt);
	});
	return t;
}

uint64_t devhost_get(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
		     uint64_t size, uint64_t daddr, uint32_t dkey, int mcst, int blocking, int rsm, int nic,
		     uint32_t code_opt)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		constexpr auto S = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD;
		constexpr auto ME = DOCA_GPUNETIO_VERBS_MCST_ENABLED;
		constexpr auto MD = DOCA_GPUNETIO_VERBS_MCST_DISABLED;
		constexpr auto BE = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED;
		constexpr auto BD = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED;
		auto r = A(raddr, rkey), l = A(laddr, lkey), d = A(daddr, dkey);
		if (mcst && blocking)
			doca_gpu_dev_verbs_get<M::rsm, M::nic, S, ME, BE>(qp, r, l, size, d, &t, code_opt);
		else if (mcst)
			doca_gpu_dev_verbs_get<M::rsm, M::nic, S, ME, BD>(qp, r, l, size, d, &t, code_opt);
		else if (blocking)
			doca_gpu_dev_verbs_get<M::rsm, M::nic, S, MD, BE>(qp, r, l, size, d, &t, code_opt);
		else
			doca_gpu_dev_verbs_get<M::rsm, M::nic, S, MD, BD>(qp, r, l, size, d, &t, code_opt);
	});
	return t;
}

void devhost_get_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t daddr, uint32_t dkey, uint64_t ticket, int mcst,
		      int rsm, int nic)
{
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		if (mcst)
			doca_gpu_dev_verbs_get_wait<M::rsm, M::nic, DOCA_GPUNETIO_VERBS_MCST_ENABLED>(qp, A(daddr, dkey),
												ticket);
		else
			doca_gpu_dev_verbs_get_wait<M::rsm, M::nic>(qp, A(daddr, dkey), ticket);
	});
}

void devhost_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticket, int rsm)
{
	with_rsm(rsm, [&](auto m) { doca_gpu_dev_verbs_wait<decltype(m)::rsm>(qp, ticket); });
}

void devhost_wait_all(struct doca_gpu_dev_verbs_qp *qp, int rsm)
{
	with_rsm(rsm, [&](auto m) { doca_gpu_dev_verbs_wait<decltype(m)::rsm>(qp); });
}

void devhost_fence(struct doca_gpu_dev_verbs_qp *qp)
{
	doca_gpu_dev_verbs_fence(qp);
}

void devhost_counter(int kind, struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
		     uint32_t lkey, uint64_t size, uint64_t sig_raddr, uint32_t sig_rkey, uint64_t sig_laddr,
		     uint32_t sig_lkey, uint64_t sig_val, struct doca_gpu_dev_verbs_qp *companion,
		     uint64_t counter_raddr, uint32_t counter_rkey, uint64_t counter_laddr, uint32_t counter_lkey,
		     uint64_t counter_val, int sig_op, int rsm, int nic, uint32_t code_opt)
{
	with_sig(sig_op, [&](auto so) {
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		constexpr auto SO = decltype(so)::op;
		auto r = A(raddr, rkey), l = A(laddr, lkey), sr = A(sig_raddr, sig_rkey), sl = A(sig_laddr, sig_lkey);
		auto cr = A(counter_raddr, counter_rkey), cl = A(counter_laddr, counter_lkey);
		switch (kind) {
		case 0:
			doca_gpu_dev_verbs_put_counter<M::rsm, M::nic>(qp, r, l, size, companion, cr, cl, counter_val,
								       code_opt);
			break;
		case 1:
			doca_gpu_dev_verbs_p_counter<uint64_t, M::rsm, M::nic>(qp, r, laddr, companion, cr, cl,
									       counter_val, code_opt);
			break;
		case 2:
			doca_gpu_dev_verbs_put_signal_counter<SO, M::rsm, M::nic>(qp, r, l, size, sr, sl, sig_val, companion,
										  cr, cl, counter_val, code_opt);
			break;
		case 3:
			doca_gpu_dev_verbs_signal_counter<SO, M::rsm, M::nic>(qp, sr, sl, sig_val, companion, cr, cl,
									      counter_val, code_opt);
			break;
		default:
			doca_gpu_dev_verbs_get_counter<M::rsm, M::nic>(qp, r, l, size, companion, cr, cl, counter_val,
								       code_opt);
			break;
		}
	});
	});
}

int devhost_qp_get_error(struct doca_gpu_dev_verbs_qp *qp, struct gdaki_dev_qp_error *out)
{
	return gdaki_dev_qp_get_error(qp, out);
}

void devhost_set_poll_timeout(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticks)
{
	__atomic_store_n(&qp->gdaki.poll_timeout, ticks, __ATOMIC_RELEASE);
}

int devhost_probe_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t ci, int rsm)
{
	int r = 0;
	with_rsm(rsm, [&](auto m) { r = doca_priv_gpu_dev_verbs_poll_one_cq_at<decltype(m)::rsm>(cq, ci); });
	return r;
}

// Mirrors one iteration of the collapsed poll: 0 when the blocking call would return now.
int devhost_probe_collapsed(struct doca_gpu_dev_verbs_qp *qp, uint64_t ci)
{
	if (gdaki_dev_qp_get_error(qp, nullptr) != GDAKI_DEV_QP_OK)
		return 0; /* the poll returns the recorded failure at once */
	if (__atomic_load_n(&qp->sq_wqe_pi, __ATOMIC_ACQUIRE) < ci)
		return EBUSY;
	const uint64_t cqe_ci = __atomic_load_n(&qp->cq_sq.cqe_ci, __ATOMIC_ACQUIRE);
	if (ci < cqe_ci)
		return 0;
	const uint32_t w32 = __builtin_bswap32(__atomic_load_n((uint32_t *)(qp->cq_sq.cqe_daddr + 60), __ATOMIC_ACQUIRE));
	const uint16_t w = (uint16_t)(w32 >> 16);
	const uint8_t op = (uint8_t)((w32 & 0xff) >> 4);
	if (op == DOCA_GPUNETIO_IB_MLX5_CQE_REQ_ERR || op == DOCA_GPUNETIO_IB_MLX5_CQE_RESP_ERR)
		return 0; /* the poll returns the error at once */
	if (op == DOCA_GPUNETIO_IB_MLX5_CQE_INVALID)
		return EBUSY;
	if (cqe_ci <= ci && (uint16_t)((uint16_t)ci - w - 2) < qp->cq_sq.cqe_num)
		return EBUSY;
	return 0;
}

void devhost_submit_multi(struct doca_gpu_dev_verbs_qp *qp0, struct doca_gpu_dev_verbs_qp *qp1, uint64_t pi0,
			  uint64_t pi1, int rsm, int nic, uint32_t code_opt)
{
	struct doca_gpu_dev_verbs_qp *qps[2] = {qp0, qp1};
	uint64_t pis[2] = {pi0, pi1};
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		doca_gpu_dev_verbs_submit_multi_qps<2, M::rsm, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, M::nic>(qps, pis,
													code_opt);
	});
}


// ---- two-sided ----------------------------------------------------------------------------------

uint64_t devhost_send(struct doca_gpu_dev_verbs_qp *qp, uint64_t laddr, uint32_t lkey, uint64_t size, int rsm, int nic)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		doca_gpu_dev_verbs_send<M::rsm, M::nic>(qp, A(laddr, lkey), size, &t);
	});
	return t;
}

uint64_t devhost_recv(struct doca_gpu_dev_verbs_qp *qp, uint64_t laddr, uint32_t lkey, uint64_t size, int rsm, int nic)
{
	doca_gpu_dev_verbs_ticket_t t = 0;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		doca_gpu_dev_verbs_recv<M::rsm, M::nic>(qp, A(laddr, lkey), size, &t);
	});
	return t;
}

void devhost_recv_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t daddr, uint32_t dkey, uint64_t ticket, int last,
		       int rsm, int nic, int mcst, int blocking, void **cqe)
{
	struct mlx5_cqe64 *c = (struct mlx5_cqe64 *)*cqe;
	doca_gpu_dev_verbs_ticket_t t = ticket;
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		constexpr auto on = DOCA_GPUNETIO_VERBS_MCST_ENABLED;
		constexpr auto off = DOCA_GPUNETIO_VERBS_MCST_DISABLED;
		constexpr auto bon = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED;
		constexpr auto boff = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED;
		if (last) {
			if (mcst)
				doca_gpu_dev_verbs_recv_wait<M::rsm, M::nic, on>(qp, A(daddr, dkey), &c);
			else
				doca_gpu_dev_verbs_recv_wait<M::rsm, M::nic, off>(qp, A(daddr, dkey), &c);
		} else if (blocking) {
			if (mcst)
				doca_gpu_dev_verbs_recv_wait<M::rsm, M::nic, on, bon>(qp, A(daddr, dkey), &t, &c);
			else
				doca_gpu_dev_verbs_recv_wait<M::rsm, M::nic, off, bon>(qp, A(daddr, dkey), &t, &c);
		} else {
			if (mcst)
				doca_gpu_dev_verbs_recv_wait<M::rsm, M::nic, on, boff>(qp, A(daddr, dkey), &t, &c);
			else
				doca_gpu_dev_verbs_recv_wait<M::rsm, M::nic, off, boff>(qp, A(daddr, dkey), &t, &c);
		}
	});
	*cqe = (void *)c;
}

void devhost_wait_recv(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticket, uint64_t daddr, uint32_t dkey, int rsm, int nic)
{
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		doca_gpu_dev_verbs_wait_recv<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD, M::rsm, M::nic>(qp, ticket, A(daddr, dkey));
	});
}

int devhost_poll_cq_rq(struct doca_gpu_dev_verbs_qp *qp, uint64_t idx, int rsm, int blocking, void **cqe)
{
	struct mlx5_cqe64 *c = (struct mlx5_cqe64 *)0;
	int r = 0;
	with_rsm(rsm, [&](auto m) {
		constexpr auto R = decltype(m)::rsm;
		if (blocking)
			r = doca_gpu_dev_verbs_poll_cq<R, DOCA_GPUNETIO_VERBS_QP_RQ>(doca_gpu_dev_verbs_qp_get_cq_rq(qp), idx, &c);
		else
			r = doca_gpu_dev_verbs_poll_cq<R, DOCA_GPUNETIO_VERBS_QP_RQ, DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>(
				doca_gpu_dev_verbs_qp_get_cq_rq(qp), idx, &c);
	});
	*cqe = (void *)c;
	return r;
}

int devhost_poll_one_cq_device_at_rq(struct doca_gpu_dev_verbs_qp *qp, uint64_t idx, int rsm, void **cqe)
{
	doca_gpu_dev_verbs_cqe64 *c = (doca_gpu_dev_verbs_cqe64 *)0;
	int r = 0;
	with_rsm(rsm, [&](auto m) {
		r = doca_gpu_dev_verbs_poll_one_cq_device_at<decltype(m)::rsm, DOCA_GPUNETIO_VERBS_QP_RQ>(
			doca_gpu_dev_verbs_qp_get_cq_rq(qp), idx, &c);
	});
	*cqe = (void *)c;
	return r;
}

uint32_t devhost_cqe_is_inline(void *cqe) { return doca_gpu_dev_verbs_cqe_is_inline((struct mlx5_cqe64 *)cqe); }

void *devhost_cqe_get_inl_data(void *cqe) { return doca_gpu_dev_verbs_cqe_get_inl_data((struct mlx5_cqe64 *)cqe); }

uint32_t devhost_cqe_get_bytes(void *cqe) { return doca_gpu_dev_verbs_cqe_get_bytes((struct mlx5_cqe64 *)cqe); }

void *devhost_get_rwqe_ptr(struct doca_gpu_dev_verbs_qp *qp, uint16_t idx)
{
	return (void *)doca_gpu_dev_verbs_get_rwqe_ptr(qp, idx);
}

void devhost_prepare_recv(struct doca_gpu_dev_verbs_qp *qp, void *rwqe, uint64_t addr, uint32_t key, uint32_t bytes)
{
	doca_gpu_dev_verbs_wqe_prepare_recv(qp, (struct mlx5_wqe_data_seg *)rwqe, addr, key, bytes);
}

void devhost_prepare_send(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t opcode, uint32_t flags,
			  uint32_t imm, int nseg, const uint64_t *a, const uint32_t *k, const uint32_t *b)
{
	struct doca_gpu_dev_verbs_wqe *w = (struct doca_gpu_dev_verbs_wqe *)wqe;
	const auto f = (enum doca_gpu_dev_verbs_wqe_ctrl_flags)flags;
	switch (nseg) {
	case 0:
		doca_gpu_dev_verbs_wqe_prepare_send(qp, w, idx, opcode, f, imm);
		break;
	case 1:
		doca_gpu_dev_verbs_wqe_prepare_send(qp, w, idx, opcode, f, imm, a[0], k[0], b[0]);
		break;
	case 2:
		doca_gpu_dev_verbs_wqe_prepare_send(qp, w, idx, opcode, f, imm, a[0], k[0], b[0], a[1], k[1], b[1]);
		break;
	default:
		doca_gpu_dev_verbs_wqe_prepare_send(qp, w, idx, opcode, f, imm, a[0], k[0], b[0], a[1], k[1], b[1], a[2], k[2],
						    b[2]);
		break;
	}
}

uint64_t devhost_rq_reserve(struct doca_gpu_dev_verbs_qp *qp, uint32_t n, int rsm, uint32_t code_opt)
{
	uint64_t r = 0;
	with_rsm(rsm, [&](auto m) {
		r = doca_gpu_dev_verbs_reserve_wq_slots<decltype(m)::rsm, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, n, code_opt);
	});
	return r;
}

void devhost_rq_mark_ready(struct doca_gpu_dev_verbs_qp *qp, uint64_t from, uint64_t to, int rsm)
{
	with_rsm(rsm, [&](auto m) {
		doca_gpu_dev_verbs_mark_wqes_ready<decltype(m)::rsm, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, from, to);
	});
}

void devhost_rq_submit(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi, int rsm, int nic)
{
	with_modes(rsm, nic, [&](auto m) {
		using M = decltype(m);
		doca_gpu_dev_verbs_submit<M::rsm, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, M::nic, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, pi);
	});
}

struct doca_gpu_dev_verbs_cq *devhost_qp_cq_rq(struct doca_gpu_dev_verbs_qp *qp) { return &qp->cq_rq; }

} // extern "C"
