/* Offsets and sizes of the device structs as the C compiler lays them out (for the layout test). */
#include <stddef.h>
#include "devhost.h"

#define FIELD(T, f) {#T "." #f, offsetof(struct T, f), sizeof(((struct T *)0)->f)}
#define SIZE(T) {#T, 0, sizeof(struct T)}
#define ALIGN(T) {#T ".align", 0, _Alignof(struct T)}

static const struct devhost_field devhost_fields[] = {
	SIZE(doca_gpu_dev_verbs_qp), ALIGN(doca_gpu_dev_verbs_qp),
	FIELD(doca_gpu_dev_verbs_qp, sq_rsvd_index), FIELD(doca_gpu_dev_verbs_qp, sq_ready_index),
	FIELD(doca_gpu_dev_verbs_qp, sq_wqe_pi), FIELD(doca_gpu_dev_verbs_qp, sq_num),
	FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8), FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be),
	FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_1ds), FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_2ds),
	FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_3ds), FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_4ds),
	FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_5ds), FIELD(doca_gpu_dev_verbs_qp, sq_lock),
	FIELD(doca_gpu_dev_verbs_qp, sq_wqe_num), FIELD(doca_gpu_dev_verbs_qp, sq_wqe_mask),
	FIELD(doca_gpu_dev_verbs_qp, sq_wqe_daddr), FIELD(doca_gpu_dev_verbs_qp, sq_dbrec),
	FIELD(doca_gpu_dev_verbs_qp, sq_db), FIELD(doca_gpu_dev_verbs_qp, reserved1),
	FIELD(doca_gpu_dev_verbs_qp, reserved2), FIELD(doca_gpu_dev_verbs_qp, cq_sq),
	FIELD(doca_gpu_dev_verbs_qp, reserved3), FIELD(doca_gpu_dev_verbs_qp, nic_handler),
	FIELD(doca_gpu_dev_verbs_qp, mem_type),

	SIZE(doca_gpu_dev_verbs_cq), ALIGN(doca_gpu_dev_verbs_cq),
	FIELD(doca_gpu_dev_verbs_cq, cqe_daddr), FIELD(doca_gpu_dev_verbs_cq, cq_num),
	FIELD(doca_gpu_dev_verbs_cq, cqe_num), FIELD(doca_gpu_dev_verbs_cq, dbrec), FIELD(doca_gpu_dev_verbs_cq, cqe_ci),
	FIELD(doca_gpu_dev_verbs_cq, cqe_mask), FIELD(doca_gpu_dev_verbs_cq, cqe_size),
	FIELD(doca_gpu_dev_verbs_cq, reserved1), FIELD(doca_gpu_dev_verbs_cq, cqe_rsvd),
	FIELD(doca_gpu_dev_verbs_cq, mem_type), FIELD(doca_gpu_dev_verbs_cq, reserved2),

	SIZE(doca_gpu_dev_verbs_wqe), ALIGN(doca_gpu_dev_verbs_wqe),
	FIELD(doca_gpu_dev_verbs_wqe, inl_data), FIELD(doca_gpu_dev_verbs_wqe, dseg0), FIELD(doca_gpu_dev_verbs_wqe, dseg1),
	FIELD(doca_gpu_dev_verbs_wqe, dseg2), FIELD(doca_gpu_dev_verbs_wqe, dseg3), FIELD(doca_gpu_dev_verbs_wqe, rw_cseg),
	FIELD(doca_gpu_dev_verbs_wqe, rw_rseg), FIELD(doca_gpu_dev_verbs_wqe, rw_dseg0),
	FIELD(doca_gpu_dev_verbs_wqe, rw_dseg1), FIELD(doca_gpu_dev_verbs_wqe, at_cseg),
	FIELD(doca_gpu_dev_verbs_wqe, at_rseg), FIELD(doca_gpu_dev_verbs_wqe, at_seg), FIELD(doca_gpu_dev_verbs_wqe, at_dseg),
	FIELD(doca_gpu_dev_verbs_wqe, snd_cseg), FIELD(doca_gpu_dev_verbs_wqe, snd_dseg0),
	FIELD(doca_gpu_dev_verbs_wqe, snd_dseg1), FIELD(doca_gpu_dev_verbs_wqe, snd_dseg2),
	FIELD(doca_gpu_dev_verbs_wqe, wait_cseg), FIELD(doca_gpu_dev_verbs_wqe, wait_dseg),
	FIELD(doca_gpu_dev_verbs_wqe, padding0), FIELD(doca_gpu_dev_verbs_wqe, padding1),

	SIZE(doca_gpu_dev_verbs_addr), ALIGN(doca_gpu_dev_verbs_addr),
	FIELD(doca_gpu_dev_verbs_addr, addr), FIELD(doca_gpu_dev_verbs_addr, key),

	SIZE(doca_gpunetio_ib_mlx5_wqe_ctrl_seg), ALIGN(doca_gpunetio_ib_mlx5_wqe_ctrl_seg),
	FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, opmod_idx_opcode), FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, qpn_ds),
	FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, signature),
	FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, dci_stream_channel_id),
	FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, fm_ce_se), FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, signature_fm_ce_se),
	FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, imm),

	SIZE(doca_gpunetio_ib_mlx5_wqe_data_seg), ALIGN(doca_gpunetio_ib_mlx5_wqe_data_seg),
	FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, byte_count), FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, lkey),
	FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, addr),
	SIZE(doca_gpunetio_ib_mlx5_wqe_raddr_seg), FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, raddr),
	FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, rkey), FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, reserved),
	SIZE(doca_gpunetio_ib_mlx5_wqe_atomic_seg), FIELD(doca_gpunetio_ib_mlx5_wqe_atomic_seg, swap_add),
	FIELD(doca_gpunetio_ib_mlx5_wqe_atomic_seg, compare),
	SIZE(doca_gpunetio_ib_mlx5_wqe_inl_data_seg),
	SIZE(doca_gpunetio_ib_mlx5_wqe_wait_seg), FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, resv),
	FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, max_index), FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, qpn_cqn),
	SIZE(doca_gpunetio_ib_mlx5_tm_cqe), ALIGN(doca_gpunetio_ib_mlx5_tm_cqe),
	FIELD(doca_gpunetio_ib_mlx5_tm_cqe, success), FIELD(doca_gpunetio_ib_mlx5_tm_cqe, hw_phase_cnt),
	FIELD(doca_gpunetio_ib_mlx5_tm_cqe, rsvd0),
	SIZE(doca_gpunetio_ib_ibv_tmh), ALIGN(doca_gpunetio_ib_ibv_tmh), FIELD(doca_gpunetio_ib_ibv_tmh, opcode),
	FIELD(doca_gpunetio_ib_ibv_tmh, reserved), FIELD(doca_gpunetio_ib_ibv_tmh, app_ctx),
	FIELD(doca_gpunetio_ib_ibv_tmh, tag),

	SIZE(doca_gpunetio_ib_mlx5_cqe64), ALIGN(doca_gpunetio_ib_mlx5_cqe64),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, wqe_id), FIELD(doca_gpunetio_ib_mlx5_cqe64, ml_path),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, slid), FIELD(doca_gpunetio_ib_mlx5_cqe64, flags_rqpn),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, hds_ip_ext), FIELD(doca_gpunetio_ib_mlx5_cqe64, l4_hdr_type_etc),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, vlan_info), FIELD(doca_gpunetio_ib_mlx5_cqe64, tm_cqe),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, tmh), FIELD(doca_gpunetio_ib_mlx5_cqe64, srqn_uidx),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, imm_inval_pkey), FIELD(doca_gpunetio_ib_mlx5_cqe64, app),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, app_op), FIELD(doca_gpunetio_ib_mlx5_cqe64, app_info),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, byte_cnt), FIELD(doca_gpunetio_ib_mlx5_cqe64, timestamp),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, sop_drop_qpn), FIELD(doca_gpunetio_ib_mlx5_cqe64, wqe_counter),
	FIELD(doca_gpunetio_ib_mlx5_cqe64, signature), FIELD(doca_gpunetio_ib_mlx5_cqe64, op_own),

	SIZE(doca_gpunetio_ib_mlx5_err_cqe_ex), ALIGN(doca_gpunetio_ib_mlx5_err_cqe_ex),
	FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, rsvd0), FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, srqn),
	FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, rsvd1), FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, hw_err_synd),
	FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, hw_synd_type), FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, vendor_err_synd),
	FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, syndrome), FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, s_wqe_opcode_qpn),
	FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, wqe_counter), FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, signature),
	FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, op_own),
};

size_t devhost_layout(const struct devhost_field **out)
{
	*out = devhost_fields;
	return sizeof(devhost_fields) / sizeof(devhost_fields[0]);
}
