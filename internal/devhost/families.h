/*
 * C entry points into the family corpus (cuda/test/corpus): kernels written in each DOCA family's
 * style, compiled here as host C++ (families_sdk.cpp with GDAKI_DOCA_FAMILY_SDK, families_os.cpp
 * without). Addresses are (addr, big-endian key) pairs as in devhost.h.
 */
#ifndef DEVHOST_FAMILIES_H
#define DEVHOST_FAMILIES_H

#include <stddef.h>
#include <stdint.h>
#include "common/doca_gpunetio_verbs_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

uint64_t devhost_sdk32_put_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				uint32_t lkey, uint64_t size);
uint64_t devhost_sdk32_get_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				uint32_t lkey, uint64_t size, uint64_t daddr, uint32_t dkey);
uint32_t devhost_sdk33_write_lowlevel(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				      uint32_t lkey, uint32_t size, uint64_t *ticket);
void devhost_sdk33_put_counter(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			       uint32_t lkey, uint64_t size, struct doca_gpu_dev_verbs_qp *companion, uint64_t craddr,
			       uint32_t crkey, uint64_t claddr, uint32_t clkey, uint64_t val);
uint64_t devhost_sdk33_p_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t value,
				uint64_t sraddr, uint32_t srkey, uint64_t sladdr, uint32_t slkey, uint64_t sig_val);
uint64_t devhost_sdk34_put_nop(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			       uint32_t lkey, uint64_t size);
/* NIC handler values as a GDAKI_DOCA_FAMILY_SDK build numbers them; which = 0 AUTO, 1 CPU_PROXY,
 * 2 GPU_SM_DB, 3 GPU_SM_BF, 4 GPU_SM_NO_DBR, 5 CPU_PROXY_NO_DBR. */
int devhost_sdk_nic_handler_value(int which);
int devhost_sdk_qp_nic_handler(struct doca_gpu_dev_verbs_qp *qp);

uint64_t devhost_os_put_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			     uint32_t lkey, uint64_t size);
void devhost_os_put_counter(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			    uint32_t lkey, uint64_t size, struct doca_gpu_dev_verbs_qp *companion, uint64_t craddr,
			    uint32_t crkey, uint64_t claddr, uint32_t clkey, uint64_t val);
uint32_t devhost_os_write_fenced(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				 uint32_t lkey, uint32_t size, uint64_t *ticket);
uint64_t devhost_nccl_get_mcst(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			       uint32_t lkey, uint64_t size, uint64_t daddr, uint32_t dkey);
/* As devhost_sdk_nic_handler_value, for a build without GDAKI_DOCA_FAMILY_SDK. */
int devhost_os_nic_handler_value(int which);
int devhost_os_qp_nic_handler(struct doca_gpu_dev_verbs_qp *qp);

#ifdef __cplusplus
}
#endif

#endif
