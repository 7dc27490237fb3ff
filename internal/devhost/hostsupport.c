/* Store log and fake-NIC CQE writers for the host-compiled device API (see devhost.h). */
#include <pthread.h>
#include <string.h>
#include "devhost.h"

#define DEVHOST_LOG_CAP (1u << 16)

static struct devhost_store devhost_log[DEVHOST_LOG_CAP];
static size_t devhost_log_len;
static int devhost_log_on;
static pthread_mutex_t devhost_log_mu = PTHREAD_MUTEX_INITIALIZER;

void devhost_store_hook(void *addr, uint64_t value, int bytes)
{
	if (!__atomic_load_n(&devhost_log_on, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&devhost_log_mu);
	if (devhost_log_len < DEVHOST_LOG_CAP) {
		devhost_log[devhost_log_len].addr = (uint64_t)(uintptr_t)addr;
		devhost_log[devhost_log_len].value = value;
		devhost_log[devhost_log_len].bytes = bytes;
	}
	devhost_log_len++;
	pthread_mutex_unlock(&devhost_log_mu);
}

void devhost_log_enable(int on)
{
	__atomic_store_n(&devhost_log_on, on, __ATOMIC_RELEASE);
}

size_t devhost_log_read(struct devhost_store *out, size_t max)
{
	pthread_mutex_lock(&devhost_log_mu);
	size_t n = devhost_log_len;
	size_t c = n < DEVHOST_LOG_CAP ? n : DEVHOST_LOG_CAP;
	if (c > max)
		c = max;
	memcpy(out, devhost_log, c * sizeof(*out));
	pthread_mutex_unlock(&devhost_log_mu);
	return n;
}

void devhost_log_reset(void)
{
	pthread_mutex_lock(&devhost_log_mu);
	devhost_log_len = 0;
	pthread_mutex_unlock(&devhost_log_mu);
}

void devhost_write_cqe(struct doca_gpu_dev_verbs_cq *cq, uint64_t x, uint16_t wqe_counter, uint8_t opcode,
		       uint8_t syndrome)
{
	uint8_t *cqe = cq->cqe_daddr + (x & (uint64_t)(cq->cqe_num - 1)) * 64;
	uint8_t owner = (x & (uint64_t)cq->cqe_num) ? 1 : 0;
	memset(cqe, 0, 63);
	cqe[55] = syndrome;
	cqe[60] = (uint8_t)(wqe_counter >> 8);
	cqe[61] = (uint8_t)wqe_counter;
	__atomic_store_n(&cqe[63], (uint8_t)((opcode << 4) | owner), __ATOMIC_RELEASE);
}

void devhost_write_collapsed_cqe(struct doca_gpu_dev_verbs_cq *cq, uint16_t wqe_counter, uint8_t opcode)
{
	uint8_t *cqe = cq->cqe_daddr;
	uint32_t word = ((uint32_t)wqe_counter << 16) | (uint32_t)(opcode << 4);
	/* bytes 60..63 big-endian: wqe_counter, signature 0, op_own */
	uint32_t be = __builtin_bswap32(word);
	__atomic_store_n((uint32_t *)(cqe + 60), be, __ATOMIC_RELEASE);
}

static uint32_t devhost_be32(uint32_t v)
{
	return __builtin_bswap32(v);
}

void devhost_fill_qp(struct doca_gpu_dev_verbs_qp *qp, uint32_t qpn, void *sq, uint16_t sq_wqes, void *sq_dbrec,
		     void *sq_db, int nic_handler, uint32_t cqn, void *cqes, uint32_t cqe_num, void *cq_dbrec)
{
	memset(qp, 0, sizeof(*qp));
	qp->sq_num = qpn;
	qp->sq_num_shift8 = qpn << 8;
	qp->sq_num_shift8_be = devhost_be32(qpn << 8);
	qp->sq_num_shift8_be_1ds = devhost_be32((qpn << 8) | 1);
	qp->sq_num_shift8_be_2ds = devhost_be32((qpn << 8) | 2);
	qp->sq_num_shift8_be_3ds = devhost_be32((qpn << 8) | 3);
	qp->sq_num_shift8_be_4ds = devhost_be32((qpn << 8) | 4);
	qp->sq_num_shift8_be_5ds = devhost_be32((qpn << 8) | 5);
	qp->sq_wqe_num = sq_wqes;
	qp->sq_wqe_mask = (uint16_t)(sq_wqes - 1);
	qp->sq_wqe_daddr = (uint8_t *)sq;
	qp->sq_dbrec = (__be32 *)sq_dbrec;
	qp->sq_db = (uint64_t *)sq_db;
	qp->nic_handler = (enum doca_gpu_dev_verbs_nic_handler)nic_handler;
	qp->mem_type = DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU;
	qp->cq_sq.cqe_daddr = (uint8_t *)cqes;
	qp->cq_sq.cq_num = cqn;
	qp->cq_sq.cqe_num = cqe_num;
	qp->cq_sq.dbrec = (__be32 *)cq_dbrec;
	qp->cq_sq.cqe_mask = cqe_num - 1;
	qp->cq_sq.cqe_size = 64;
	qp->cq_sq.gdaki_flags = GDAKI_DEV_CQ_FLAG_IN_QP;
	qp->cq_sq.mem_type = DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU;
	for (uint32_t i = 0; i < cqe_num; i++) {
		uint8_t *cqe = (uint8_t *)cqes + (size_t)i * 64;
		memset(cqe, 0, 64);
		cqe[63] = (uint8_t)((DOCA_GPUNETIO_IB_MLX5_CQE_INVALID << 4) | DOCA_GPUNETIO_IB_MLX5_CQE_OWNER_MASK);
	}
}
