/*
 * C wrappers around the host-compiled thread-scope GPUNetIO device API (cuda/include). Each
 * wrapper takes a struct doca_gpu_dev_verbs_qp * (or cq *) in C memory; sharing mode (rsm),
 * NIC handler (nic) and flags are runtime arguments mapped onto the template instantiations.
 * rsm: 0 EXCLUSIVE, 1 CTA, 2 GPU. nic: 0 AUTO, 1 CPU_PROXY, 2 GPU_SM_DB, 6 GPU_SM_BF, 10 GPU_SM_NO_DBR.
 */
#ifndef GPUNETIO_DEVHOST_H
#define GPUNETIO_DEVHOST_H

#include <stddef.h>
#include <stdint.h>
#include "common/doca_gpunetio_verbs_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builders. */
void devhost_prepare_nop(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags);
void devhost_prepare_write(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t opcode, uint32_t flags,
			   uint32_t imm, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t bytes);
void devhost_prepare_write2(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t opcode, uint32_t flags,
			    uint32_t imm, uint64_t raddr, uint32_t rkey, uint64_t laddr0, uint32_t lkey0, uint32_t bytes0,
			    uint64_t laddr1, uint32_t lkey1, uint32_t bytes1);
void devhost_prepare_inl_header(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags,
				uint64_t raddr, uint32_t rkey, uint32_t bytes);
/* Inline payload of size bytes (1..28) taken from data, as prepare_inl_rdma_write_wqe_data<T>. */
int devhost_prepare_inl_data(struct doca_gpu_dev_verbs_qp *qp, void *wqe, const void *data, uint32_t size);
void devhost_prepare_write_inl(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags,
			       uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t bytes);
void devhost_prepare_read(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags, uint64_t raddr,
			  uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t bytes);
void devhost_prepare_read2(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags, uint64_t raddr,
			   uint32_t rkey, uint64_t laddr0, uint32_t lkey0, uint32_t bytes0, uint64_t laddr1,
			   uint32_t lkey1, uint32_t bytes1);
void devhost_prepare_atomic(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t opcode, uint32_t flags,
			    uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t bytes,
			    uint64_t compare_add, uint64_t swap_add);
void devhost_prepare_atomic_ext(struct doca_gpu_dev_verbs_qp *qp, void *wqe0, void *wqe1, int bytes8, uint16_t idx,
				uint32_t opcode, uint32_t flags, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				uint32_t lkey, uint64_t add_data, uint64_t field_boundary, uint64_t swap_data,
				uint64_t compare_data, uint64_t swap_mask, uint64_t compare_mask);
void devhost_prepare_wait(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags,
			  uint32_t max_index, uint32_t qpn_cqn);
void devhost_prepare_dump(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t flags, uint64_t laddr,
			  uint32_t lkey, uint32_t bytes);
void *devhost_get_wqe_ptr(struct doca_gpu_dev_verbs_qp *qp, uint16_t idx);
uint64_t devhost_prepare_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi);
uint32_t devhost_prepare_dbr(uint32_t pi);

/* Low-level SQ. */
uint64_t devhost_reserve(struct doca_gpu_dev_verbs_qp *qp, uint32_t count, int rsm, uint32_t code_opt);
void devhost_mark_ready(struct doca_gpu_dev_verbs_qp *qp, uint64_t from, uint64_t to, int rsm, int ready_mode);
void devhost_submit(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi, int rsm, int nic, uint32_t code_opt);
void devhost_update_dbr(struct doca_gpu_dev_verbs_qp *qp, uint32_t pi);
void devhost_ring_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi);
void devhost_ring_proxy(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi, int rsm);

/* CQ. */
int devhost_poll_one_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t ci, int rsm);
int devhost_poll_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t ci, int rsm);
int devhost_poll_cq_collapsed_at(struct doca_gpu_dev_verbs_qp *qp, uint64_t ci, int rsm);
int devhost_poll_cq(struct doca_gpu_dev_verbs_cq *cq, uint32_t count, int rsm);
uint32_t devhost_cq_update_dbrec(struct doca_gpu_dev_verbs_cq *cq, uint32_t n, int is_overrun);

/* High-level one-sided (thread scope). Return the ticket. */
uint64_t devhost_put(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
		     uint64_t size, int rsm, int nic, uint32_t code_opt);
/* size is 1, 2, 4 or 8; value's low size bytes (native order) are sent. */
uint64_t devhost_p(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t value, uint32_t size,
		   int rsm, int nic, uint32_t code_opt);
uint64_t devhost_put_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			    uint32_t lkey, uint64_t size, uint64_t sig_raddr, uint32_t sig_rkey, uint64_t sig_laddr,
			    uint32_t sig_lkey, uint64_t sig_val, int sig_op, int rsm, int nic, uint32_t code_opt);
uint64_t devhost_p_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t value,
			  uint64_t sig_raddr, uint32_t sig_rkey, uint64_t sig_laddr, uint32_t sig_lkey,
			  uint64_t sig_val, int sig_op, int rsm, int nic, uint32_t code_opt);
uint64_t devhost_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t sig_raddr, uint32_t sig_rkey, uint64_t sig_laddr,
			uint32_t sig_lkey, uint64_t sig_val, int sig_op, int rsm, int nic, uint32_t code_opt);
uint64_t devhost_get(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
		     uint64_t size, uint64_t daddr, uint32_t dkey, int mcst, int blocking, int rsm, int nic,
		     uint32_t code_opt);
void devhost_get_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t daddr, uint32_t dkey, uint64_t ticket, int mcst,
		      int rsm, int nic);
void devhost_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticket, int rsm);
void devhost_wait_all(struct doca_gpu_dev_verbs_qp *qp, int rsm);
void devhost_fence(struct doca_gpu_dev_verbs_qp *qp);

/* Counters. kind: 0 put, 1 p (value in laddr, 8 bytes), 2 put_signal, 3 signal, 4 get. */
void devhost_counter(int kind, struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
		     uint32_t lkey, uint64_t size, uint64_t sig_raddr, uint32_t sig_rkey, uint64_t sig_laddr,
		     uint32_t sig_lkey, uint64_t sig_val, struct doca_gpu_dev_verbs_qp *companion,
		     uint64_t counter_raddr, uint32_t counter_rkey, uint64_t counter_laddr, uint32_t counter_lkey,
		     uint64_t counter_val, int sig_op, int rsm, int nic, uint32_t code_opt);
void devhost_submit_multi(struct doca_gpu_dev_verbs_qp *qp0, struct doca_gpu_dev_verbs_qp *qp1, uint64_t pi0,
			  uint64_t pi1, int rsm, int nic, uint32_t code_opt);

/* Store log: every doorbell (8 bytes), doorbell record (4) and proxy mailbox (8) store made by
 * the headers, in program order per thread, while enabled. */
struct devhost_store {
	uint64_t addr;
	uint64_t value;
	int32_t bytes;
	int32_t pad;
};
void devhost_store_hook(void *addr, uint64_t value, int bytes);
void devhost_log_enable(int on);
/* Copies up to max entries recorded since the last reset; returns the number recorded (may exceed max). */
size_t devhost_log_read(struct devhost_store *out, size_t max);
void devhost_log_reset(void);

/* Fake NIC: writes a CQE for CQ index x (= WQE index + cqe_rsvd) with the owner bit of x's lap,
 * the given wqe_counter and opcode; op_own is stored last with release order. */
void devhost_write_cqe(struct doca_gpu_dev_verbs_cq *cq, uint64_t x, uint16_t wqe_counter, uint8_t opcode,
		       uint8_t syndrome);
/* Collapsed CQ: writes entry 0 with wqe_counter and opcode (owner bit 0). */
void devhost_write_collapsed_cqe(struct doca_gpu_dev_verbs_cq *cq, uint16_t wqe_counter, uint8_t opcode);

/* Fills a zeroed QP image as the host does at export: geometry, QPN words,
 * indexes 0, embedded send CQ; sq_dbrec must point at the SQ DBR word (DBR base + 4). */
void devhost_fill_qp(struct doca_gpu_dev_verbs_qp *qp, uint32_t qpn, void *sq, uint16_t sq_wqes, void *sq_dbrec,
		     void *sq_db, int nic_handler, uint32_t cqn, void *cqes, uint32_t cqe_num, void *cq_dbrec);
/* Extensions: fetching atomics (return the ticket), fetch wait, quiet and the ordering fence.
 * (The sig_op of the signal and counter functions above is 0 for ADD, 1 for the SET extension.) */
uint64_t devhost_fetch_add(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey,
			   uint64_t value, int rsm, int nic, uint32_t code_opt);
uint64_t devhost_compare_swap(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			      uint32_t lkey, uint64_t compare, uint64_t swap, int rsm, int nic, uint32_t code_opt);
int devhost_fetch_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticket, uint64_t laddr, uint32_t lkey, uint64_t *old,
		       int rsm);
int devhost_quiet(struct doca_gpu_dev_verbs_qp *qp, int rsm);
uint64_t devhost_fence_ext(struct doca_gpu_dev_verbs_qp *qp, int rsm, int nic, uint32_t code_opt);

/* Extension: the QP's error record and poll bound (struct gdaki_dev_qp_ext). */
int devhost_qp_get_error(struct doca_gpu_dev_verbs_qp *qp, struct gdaki_dev_qp_error *out);
void devhost_set_poll_timeout(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticks);

/* Non-blocking probes used to bound host-side waits. Like every device poll they record an error
 * CQE they see in the QP's error record; they change nothing else. */
int devhost_probe_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t ci, int rsm);
int devhost_probe_collapsed(struct doca_gpu_dev_verbs_qp *qp, uint64_t ci);

/* Two-sided API (thread scope). send/recv return the ticket. recv_wait runs the 4-argument
 * recv_wait<rsm, nic, mcst, blocking> on *ticket and stores the CQE address in *cqe; the
 * 3-argument form when last is set (*cqe is left as it was when nothing was reserved). */
uint64_t devhost_send(struct doca_gpu_dev_verbs_qp *qp, uint64_t laddr, uint32_t lkey, uint64_t size, int rsm, int nic);
uint64_t devhost_recv(struct doca_gpu_dev_verbs_qp *qp, uint64_t laddr, uint32_t lkey, uint64_t size, int rsm, int nic);
void devhost_recv_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t daddr, uint32_t dkey, uint64_t ticket, int last,
		       int rsm, int nic, int mcst, int blocking, void **cqe);
void devhost_wait_recv(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticket, uint64_t daddr, uint32_t dkey, int rsm,
		       int nic);
/* poll_cq<rsm, QP_RQ, blocking>(cq_rq, idx, &cqe) and poll_one_cq_device_at<rsm, QP_RQ>. */
int devhost_poll_cq_rq(struct doca_gpu_dev_verbs_qp *qp, uint64_t idx, int rsm, int blocking, void **cqe);
int devhost_poll_one_cq_device_at_rq(struct doca_gpu_dev_verbs_qp *qp, uint64_t idx, int rsm, void **cqe);
uint32_t devhost_cqe_is_inline(void *cqe);
void *devhost_cqe_get_inl_data(void *cqe);
uint32_t devhost_cqe_get_bytes(void *cqe);
void *devhost_get_rwqe_ptr(struct doca_gpu_dev_verbs_qp *qp, uint16_t idx);
void devhost_prepare_recv(struct doca_gpu_dev_verbs_qp *qp, void *rwqe, uint64_t addr, uint32_t key, uint32_t bytes);
/* wqe_prepare_send with nseg (0..3) segments from the arrays. */
void devhost_prepare_send(struct doca_gpu_dev_verbs_qp *qp, void *wqe, uint16_t idx, uint32_t opcode, uint32_t flags,
			  uint32_t imm, int nseg, const uint64_t *addr, const uint32_t *key, const uint32_t *bytes);
/* Low-level RQ steps: reserve_wq_slots<rsm, QP_RQ>, mark_wqes_ready<rsm, QP_RQ>, submit<rsm, GPU, nic, QP_RQ>. */
uint64_t devhost_rq_reserve(struct doca_gpu_dev_verbs_qp *qp, uint32_t n, int rsm, uint32_t code_opt);
void devhost_rq_mark_ready(struct doca_gpu_dev_verbs_qp *qp, uint64_t from, uint64_t to, int rsm);
void devhost_rq_submit(struct doca_gpu_dev_verbs_qp *qp, uint64_t pi, int rsm, int nic);
struct doca_gpu_dev_verbs_cq *devhost_qp_cq_rq(struct doca_gpu_dev_verbs_qp *qp);

#ifdef __cplusplus
}
#endif

#endif /* GPUNETIO_DEVHOST_H */
