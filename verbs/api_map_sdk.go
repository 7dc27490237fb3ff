package verbs

// DOCASDKFunctions maps the host functions of the DOCA SDK's doca_verbs.h
// and doca_verbs_bridge.h (DOCA 3.3) that DOCA GPUNetIO 3.0's doca_verbs.h
// does not declare to their Go counterparts, as DOCAFunctions does for the
// 3.0 names: every entry here comes from the SDK. The completion-channel
// and asynchronous-event functions, SDK functions too, are in
// DOCAEventFunctions; the SDK functions this package does not provide are
// in DOCASDKNotProvided, with the reason. Attribute getters map to the
// field of the configuration struct they read (QP.Config, QP.Query,
// CQ.Config and SRQ.Query return those structs filled). A test checks that
// the three lists together are exactly the SDK's host functions beyond
// 3.0, less those that only a BlueField DPA or raw Ethernet queues use.
var DOCASDKFunctions = []struct{ C, Go string }{
	// Context and PD.
	{"doca_verbs_context_create", "OpenDevice"},
	{"doca_verbs_context_destroy", "Context.Close"},
	{"doca_verbs_context_export_handle", "Context.ExportHandle"},
	{"doca_verbs_context_import_from_handle", "ImportContextHandle"},
	{"doca_verbs_pd_create", "Context.AllocPD"},
	{"doca_verbs_pd_destroy", "PD.Close"},
	{"doca_verbs_pd_as_doca_dev", "OpenDev"},
	{"doca_verbs_pd_export_handle", "PD.ExportHandle"},
	{"doca_verbs_pd_import_from_handle", "Context.ImportPDHandle"},

	// Device attributes.
	{"doca_verbs_device_attr_get_atomic_cap", "DeviceAttr.AtomicCap"},
	{"doca_verbs_device_attr_get_is_send_dbr_mode_supported", "DeviceAttr.SendDBRModeNoDBRExt"},
	{"doca_verbs_device_attr_get_ts_free_running_clock_frequency", "DeviceAttr.FreeRunningClockKHz"},

	// AH attribute getters, the SDK's spelling of 3.0's doca_verbs_ah_get_*.
	{"doca_verbs_ah_attr_get_addr_type", "AHAttr.AddrType"},
	{"doca_verbs_ah_attr_get_dlid", "AHAttr.DLID"},
	{"doca_verbs_ah_attr_get_gid", "AHAttr.GID"},
	{"doca_verbs_ah_attr_get_hop_limit", "AHAttr.HopLimit"},
	{"doca_verbs_ah_attr_get_sgid_index", "AHAttr.SGIDIndex"},
	{"doca_verbs_ah_attr_get_sl", "AHAttr.SL"},
	{"doca_verbs_ah_attr_get_static_rate", "AHAttr.StaticRate"},
	{"doca_verbs_ah_attr_get_traffic_class", "AHAttr.TrafficClass"},

	// CQ attribute getters.
	{"doca_verbs_cq_attr_get_cq_context", "CQConfig.UserContext"},
	{"doca_verbs_cq_attr_get_cq_overrun", "CQConfig.Overrun"},
	{"doca_verbs_cq_attr_get_cq_size", "CQConfig.Size"},
	{"doca_verbs_cq_attr_get_external_uar", "CQConfig.UAR"},
	{"doca_verbs_cq_attr_get_external_umem", "CQConfig.UMem"},

	// QP init attribute getters and setters.
	{"doca_verbs_qp_init_attr_get_core_direct_master", "QPConfig.CoreDirectMaster"},
	{"doca_verbs_qp_init_attr_get_external_dbr_umem", "QPConfig.DBRUMem"},
	{"doca_verbs_qp_init_attr_set_external_dbr_umem", "QPConfig.DBRUMem"},
	{"doca_verbs_qp_init_attr_get_external_uar", "QPConfig.UAR"},
	{"doca_verbs_qp_init_attr_get_external_umem", "QPConfig.UMem"},
	{"doca_verbs_qp_init_attr_get_max_inline_data", "QPConfig.MaxInlineData"},
	{"doca_verbs_qp_init_attr_get_pd", "QPConfig.PD"},
	{"doca_verbs_qp_init_attr_get_pdn", "PD.PDN"},
	{"doca_verbs_qp_init_attr_get_qp_context", "QP.UserContext"},
	{"doca_verbs_qp_init_attr_get_qp_type", "QPConfig.Type"},
	{"doca_verbs_qp_init_attr_get_receive_cq", "QPConfig.RecvCQ"},
	{"doca_verbs_qp_init_attr_get_receive_cqn", "CQ.CQN"},
	{"doca_verbs_qp_init_attr_get_receive_max_sges", "QPConfig.RecvMaxSGE"},
	{"doca_verbs_qp_init_attr_get_rq_wr", "QPConfig.RQWR"},
	{"doca_verbs_qp_init_attr_get_send_cq", "QPConfig.SendCQ"},
	{"doca_verbs_qp_init_attr_get_send_cqn", "CQ.CQN"},
	{"doca_verbs_qp_init_attr_get_send_max_sges", "QPConfig.SendMaxSGE"},
	{"doca_verbs_qp_init_attr_get_sq_sig_all", "QPConfig.SQSigAll"},
	{"doca_verbs_qp_init_attr_get_sq_wr", "QPConfig.SQWR"},
	{"doca_verbs_qp_init_attr_get_srq", "QPConfig.SRQ"},
	{"doca_verbs_qp_init_attr_get_uar_id", "UAR.ID"},
	{"doca_verbs_qp_init_attr_get_user_index", "QPConfig.UserIndex"},
	{"doca_verbs_qp_init_attr_get_wq_umem_id", "UMem.ID"},
	{"doca_verbs_qp_init_attr_get_wq_umem_offset", "QPConfig.UMemOffset"},
	{"doca_verbs_qp_init_attr_get_dbr_umem_id", "QPConfig.DBRUMem"},
	{"doca_verbs_qp_init_attr_get_dbr_umem_offset", "QPConfig.DBRUMemOffset"},

	// QP attribute getters (3.0 removed them; QP.Query fills the fields).
	{"doca_verbs_qp_attr_get_ack_timeout", "QPAttr.AckTimeout"},
	{"doca_verbs_qp_attr_get_ah_attr", "QPAttr.AH"},
	{"doca_verbs_qp_attr_get_allow_remote_read", "QPAttr.AllowRemoteRead"},
	{"doca_verbs_qp_attr_get_allow_remote_write", "QPAttr.AllowRemoteWrite"},
	{"doca_verbs_qp_attr_get_atomic_mode", "QPAttr.RemoteAtomic"},
	{"doca_verbs_qp_attr_get_dest_qp_num", "QPAttr.DestQPNum"},
	{"doca_verbs_qp_attr_get_max_dest_rd_atomic", "QPAttr.MaxDestRDAtomic"},
	{"doca_verbs_qp_attr_get_max_rd_atomic", "QPAttr.MaxRDAtomic"},
	{"doca_verbs_qp_attr_get_min_rnr_timer", "QPAttr.MinRNRTimer"},
	{"doca_verbs_qp_attr_get_path_mtu", "QPAttr.PathMTU"},
	{"doca_verbs_qp_attr_get_pkey_index", "QPAttr.PKeyIndex"},
	{"doca_verbs_qp_attr_get_port_num", "QPAttr.PortNum"},
	{"doca_verbs_qp_attr_get_retry_cnt", "QPAttr.RetryCnt"},
	{"doca_verbs_qp_attr_get_rnr_retry", "QPAttr.RNRRetry"},
	{"doca_verbs_qp_attr_get_rq_psn", "QPAttr.RQPSN"},
	{"doca_verbs_qp_attr_get_sq_psn", "QPAttr.SQPSN"},

	// SRQ.
	{"doca_verbs_srq_query", "SRQ.Query"},

	// The bridge: the host data path, the wait-on-CQ work request and
	// interop with IB Verbs (rdma-core).
	{"doca_verbs_bridge_post_send", "QP.PostSend"},
	{"doca_verbs_bridge_post_recv", "QP.PostRecv"},
	{"doca_verbs_bridge_post_srq_recv", "SRQ.PostRecv"},
	{"doca_verbs_bridge_poll_cq", "CQ.Poll"},
	{"doca_verbs_bridge_get_current_cq_ci", "CQ.ConsumerIndex"},
	{"doca_verbs_bridge_set_wait_cq_pi_wr", "SetWaitCQPIWR"},
	{"doca_verbs_bridge_verbs_context_create", "OpenIBVDevice"},
	{"doca_verbs_bridge_verbs_context_import", "ImportIBVContext"},
	{"doca_verbs_bridge_get_ibv_ctx", "Context.IBVContext"},
	{"doca_verbs_bridge_verbs_pd_import", "Context.ImportIBVPD"},
	{"doca_verbs_bridge_verbs_pd_get_ibv_pd", "PD.IBVPD"},
	{"doca_verbs_bridge_verbs_query_device", "QueryDevice"},
}

// DOCASDKNotProvided lists the host functions of the DOCA SDK beyond
// GPUNetIO 3.0 that this package does not provide, each with the reason.
var DOCASDKNotProvided = []struct{ C, Why string }{
	// Congestion-control groups: firmware objects this package does not make.
	{"doca_verbs_device_attr_get_is_cc_group_supported", "congestion-control groups are not supported"},
	{"doca_verbs_device_attr_get_max_cc_group", "congestion-control groups are not supported"},
	{"doca_verbs_device_attr_get_max_cc_group_hint_max_size", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_attr_create", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_attr_destroy", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_attr_get_hint", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_attr_set_hint", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_caps_free", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_caps_get_data", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_caps_get_format_id", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_caps_get_vendor_id", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_create", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_destroy", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_modify", "congestion-control groups are not supported"},
	{"doca_verbs_cc_group_query", "congestion-control groups are not supported"},
	{"doca_verbs_query_cc_group_caps", "congestion-control groups are not supported"},
	{"doca_verbs_qp_attr_get_cc_group", "congestion-control groups are not supported"},
	{"doca_verbs_qp_attr_set_cc_group", "congestion-control groups are not supported"},
	// Enhanced connection establishment.
	{"doca_verbs_device_attr_get_is_ece_supported", "ECE is not supported"},
	{"doca_verbs_qp_query_ece", "ECE is not supported"},
	{"doca_verbs_qp_set_ece", "ECE is not supported"},
	// Receive scatter to CQE.
	{"doca_verbs_device_attr_get_is_cqe_inline_supported", "scatter-to-CQE is not supported"},
	{"doca_verbs_qp_init_attr_get_cqe_inline", "scatter-to-CQE is not supported"},
	{"doca_verbs_qp_init_attr_set_cqe_inline", "scatter-to-CQE is not supported"},
	// The external-data-path switch: every object of this package is
	// usable from both the host (its data path) and the GPU.
	{"doca_verbs_device_attr_get_is_gpu_external_datapath_supported", "no external-data-path mode: every QP and CQ may be driven by the host or a GPU"},
	{"doca_verbs_cq_attr_get_external_datapath_en", "no external-data-path mode: every QP and CQ may be driven by the host or a GPU"},
	{"doca_verbs_cq_attr_set_external_datapath_en", "no external-data-path mode: every QP and CQ may be driven by the host or a GPU"},
	{"doca_verbs_qp_init_attr_get_external_datapath_en", "no external-data-path mode: every QP and CQ may be driven by the host or a GPU"},
	{"doca_verbs_qp_init_attr_set_external_datapath_en", "no external-data-path mode: every QP and CQ may be driven by the host or a GPU"},
	{"doca_verbs_srq_init_attr_get_external_datapath_en", "no external-data-path mode: every QP and CQ may be driven by the host or a GPU"},
	{"doca_verbs_srq_init_attr_set_external_datapath_en", "no external-data-path mode: every QP and CQ may be driven by the host or a GPU"},
	// 128-byte CQEs.
	{"doca_verbs_cq_attr_get_entry_size", "CQEs are 64 bytes"},
	{"doca_verbs_cq_attr_set_entry_size", "CQEs are 64 bytes"},
	// Raw DevX ids instead of objects: objects are passed as Go values.
	{"doca_verbs_qp_init_attr_set_dbr_umem", "raw UMEM ids are not accepted: set QPConfig.DBRUMem"},
	{"doca_verbs_qp_init_attr_set_wq_umem", "raw UMEM ids are not accepted: set QPConfig.UMem"},
	{"doca_verbs_qp_init_attr_set_uar_id", "raw UAR ids are not accepted: set QPConfig.UAR"},
	{"doca_verbs_qp_init_attr_set_pdn", "raw PD numbers are not accepted: set QPConfig.PD"},
	{"doca_verbs_srq_init_attr_get_external_dbr_umem", "an SRQ's doorbell record lives in its ring's UMEM (SRQConfig.UMem)"},
	{"doca_verbs_srq_init_attr_set_external_dbr_umem", "an SRQ's doorbell record lives in its ring's UMEM (SRQConfig.UMem)"},
	// Conversions of rdma-core structures, which have no Go form here.
	{"doca_verbs_bridge_get_qp_attr_mask", "takes an ibv_qp_attr mask: use QPAttrMask"},
	{"doca_verbs_bridge_qp_attr_get", "converts to struct ibv_qp_attr: use QPAttr"},
	{"doca_verbs_bridge_qp_attr_set", "converts from struct ibv_qp_attr: use QPAttr"},
}
