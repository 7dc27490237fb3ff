package docasdk

// The SDK libraries, in load order. The load order and the flags resolve
// their dependencies when the directory is not on the loader's search path:
// libdoca_verbs.so needs libdoca_common.so and libdoca_gpunetio.so needs both,
// so the two are opened first, RTLD_GLOBAL, and the dynamic loader then finds
// them among the loaded objects by soname.
const (
	LibCommon   = "libdoca_common.so"
	LibVerbs    = "libdoca_verbs.so"
	LibGPUNetIO = "libdoca_gpunetio.so"
)

// lib indexes the libraries in load order.
type lib int

const (
	libCommon lib = iota
	libVerbs
	libGPUNetIO
	libCount
)

var libNames = [libCount]string{LibCommon, LibVerbs, LibGPUNetIO}

// libGlobal says which libraries are opened RTLD_GLOBAL (the others
// RTLD_LOCAL): the two that others depend on.
var libGlobal = [libCount]bool{true, true, false}

// group is the set of symbols that one of the reference's loaders resolves
// together; it names the summary line printed when one of them is missing.
type group int

const (
	groupGPUNetIO  group = iota // the GPU handle
	groupVerbsDev               // doca_dev, CQ, QP, AH and the bridges
	groupVerbsUMEM              // UMEM and UAR
	groupCount
)

// sym indexes the symbol table.
type sym int

// The SDK entry points, in the order they are resolved. Every one is
// mandatory except the last two (the QP ordering semantic).
const (
	// GPU handle (libdoca_gpunetio.so).
	symGPUCreate sym = iota
	symGPUDestroy
	symGPUMemAlloc
	symGPUMemFree
	symGPUDmabufFD

	// doca_dev (through libdoca_verbs.so).
	symDevOpenFromPD
	symDevClose

	// UMEM and UAR (libdoca_common.so).
	symUMEMCreate
	symUMEMGPUCreate
	symUMEMDestroy
	symUMEMGetID
	symUMEMGetSize
	symUMEMGetAddress
	symUARCreate
	symUARDestroy
	symUARIDGet
	symUARRegAddrGet

	// CQ attributes and CQ (through libdoca_verbs.so).
	symCQAttrCreate
	symCQAttrDestroy
	symCQAttrSetCQSize
	symCQAttrSetCQContext
	symCQAttrSetExternalDatapathEn
	symCQAttrSetExternalUMEM
	symCQAttrSetExternalUAR
	symCQAttrSetCQOverrun
	symCQAttrSetCQCollapsed
	symCQCreate
	symCQDestroy
	symCQGetWQ
	symCQGetDBRAddr
	symCQGetCQN

	// Bridges between rdma-core objects and SDK objects.
	symVerbsContextImport
	symDevGetPD // libdoca_common.so
	symVerbsPDImport

	// QP init attributes.
	symQPInitAttrCreate
	symQPInitAttrDestroy
	symQPInitAttrSetPD
	symQPInitAttrSetSendCQ
	symQPInitAttrSetReceiveCQ
	symQPInitAttrSetSQSigAll
	symQPInitAttrSetSQWR
	symQPInitAttrSetRQWR
	symQPInitAttrSetSendMaxSGEs
	symQPInitAttrSetReceiveMaxSGEs
	symQPInitAttrSetMaxInlineData
	symQPInitAttrSetUserIndex
	symQPInitAttrSetQPType
	symQPInitAttrSetExternalUMEM
	symQPInitAttrSetExternalDBRUMEM
	symQPInitAttrGetExternalUMEM // resolved, never called
	symQPInitAttrSetExternalDatapathEn
	symQPInitAttrSetExternalUAR
	symQPInitAttrGetExternalUAR // resolved, never called
	symQPInitAttrSetQPContext
	symQPInitAttrSetSRQ // resolved, never called
	symQPInitAttrSetCoreDirectMaster
	symQPInitAttrSetSendDBRMode
	symQPInitAttrGetSendDBRMode

	// QP attributes.
	symQPAttrCreate
	symQPAttrDestroy
	symQPAttrSetNextState
	symQPAttrSetCurrentState
	symQPAttrGetCurrentState
	symQPAttrSetPathMTU
	symQPAttrSetRQPSN
	symQPAttrSetSQPSN
	symQPAttrSetDestQPNum
	symQPAttrSetAllowRemoteWrite
	symQPAttrSetAllowRemoteRead
	symQPAttrSetAtomicMode
	symQPAttrSetAHAttr
	symQPAttrSetPKeyIndex
	symQPAttrSetPortNum
	symQPAttrSetAckTimeout
	symQPAttrSetRetryCnt
	symQPAttrSetRNRRetry
	symQPAttrSetMinRNRTimer
	symQPAttrSetMaxRDAtomic
	symQPAttrSetMaxDestRDAtomic

	// AH attributes.
	symAHAttrCreate
	symAHAttrDestroy
	symAHAttrSetGID
	symAHAttrSetAddrType
	symAHAttrSetDLID
	symAHAttrSetSL
	symAHAttrSetSGIDIndex
	symAHAttrSetStaticRate
	symAHAttrSetHopLimit
	symAHAttrSetTrafficClass

	// QP.
	symQPCreate
	symQPDestroy
	symQPModify
	symQPQuery
	symQPGetWQ
	symQPInitAttrGetQPContext
	symQPGetDBRAddr
	symQPGetUARAddr
	symQPGetQPN

	// Optional: SDK releases without the QP ordering semantic lack them.
	symQPInitAttrSetOrderingSemantic
	symQPInitAttrGetOrderingSemantic

	symCount
)

// symbol describes one entry point: its name, the library whose handle it is
// looked up through (dlsym also searches that library's dependencies), the
// loader group it belongs to, and whether the SDK may lack it.
type symbol struct {
	name     string
	lib      lib
	group    group
	optional bool
}

func inGPUNetIO(name string) symbol {
	return symbol{name: name, lib: libGPUNetIO, group: groupGPUNetIO}
}
func inVerbs(name string) symbol  { return symbol{name: name, lib: libVerbs, group: groupVerbsDev} }
func inCommon(name string) symbol { return symbol{name: name, lib: libCommon, group: groupVerbsUMEM} }

var symbols = [symCount]symbol{
	symGPUCreate:   inGPUNetIO("doca_gpu_create"),
	symGPUDestroy:  inGPUNetIO("doca_gpu_destroy"),
	symGPUMemAlloc: inGPUNetIO("doca_gpu_mem_alloc"),
	symGPUMemFree:  inGPUNetIO("doca_gpu_mem_free"),
	// The SDK keeps the 2.x name of doca_gpu_get_dmabuf_fd.
	symGPUDmabufFD: inGPUNetIO("doca_gpu_dmabuf_fd"),

	symDevOpenFromPD: inVerbs("doca_rdma_bridge_open_dev_from_pd"),
	symDevClose:      inVerbs("doca_dev_close"),

	symUMEMCreate:     inCommon("doca_umem_create"),
	symUMEMGPUCreate:  inCommon("doca_umem_gpu_create"),
	symUMEMDestroy:    inCommon("doca_umem_destroy"),
	symUMEMGetID:      inCommon("doca_umem_get_id"),
	symUMEMGetSize:    inCommon("doca_umem_get_size"),
	symUMEMGetAddress: inCommon("doca_umem_get_address"),
	symUARCreate:      inCommon("doca_uar_create"),
	symUARDestroy:     inCommon("doca_uar_destroy"),
	symUARIDGet:       inCommon("doca_uar_id_get"),
	symUARRegAddrGet:  inCommon("doca_uar_reg_addr_get"),

	symCQAttrCreate:                inVerbs("doca_verbs_cq_attr_create"),
	symCQAttrDestroy:               inVerbs("doca_verbs_cq_attr_destroy"),
	symCQAttrSetCQSize:             inVerbs("doca_verbs_cq_attr_set_cq_size"),
	symCQAttrSetCQContext:          inVerbs("doca_verbs_cq_attr_set_cq_context"),
	symCQAttrSetExternalDatapathEn: inVerbs("doca_verbs_cq_attr_set_external_datapath_en"),
	symCQAttrSetExternalUMEM:       inVerbs("doca_verbs_cq_attr_set_external_umem"),
	symCQAttrSetExternalUAR:        inVerbs("doca_verbs_cq_attr_set_external_uar"),
	symCQAttrSetCQOverrun:          inVerbs("doca_verbs_cq_attr_set_cq_overrun"),
	symCQAttrSetCQCollapsed:        inVerbs("doca_verbs_cq_attr_set_cq_collapsed"),
	symCQCreate:                    inVerbs("doca_verbs_cq_create"),
	symCQDestroy:                   inVerbs("doca_verbs_cq_destroy"),
	symCQGetWQ:                     inVerbs("doca_verbs_cq_get_wq"),
	symCQGetDBRAddr:                inVerbs("doca_verbs_cq_get_dbr_addr"),
	symCQGetCQN:                    inVerbs("doca_verbs_cq_get_cqn"),

	symVerbsContextImport: inVerbs("doca_verbs_bridge_verbs_context_import"),
	symDevGetPD:           {name: "doca_rdma_bridge_get_dev_pd", lib: libCommon, group: groupVerbsDev},
	symVerbsPDImport:      inVerbs("doca_verbs_bridge_verbs_pd_import"),

	symQPInitAttrCreate:            inVerbs("doca_verbs_qp_init_attr_create"),
	symQPInitAttrDestroy:           inVerbs("doca_verbs_qp_init_attr_destroy"),
	symQPInitAttrSetPD:             inVerbs("doca_verbs_qp_init_attr_set_pd"),
	symQPInitAttrSetSendCQ:         inVerbs("doca_verbs_qp_init_attr_set_send_cq"),
	symQPInitAttrSetReceiveCQ:      inVerbs("doca_verbs_qp_init_attr_set_receive_cq"),
	symQPInitAttrSetSQSigAll:       inVerbs("doca_verbs_qp_init_attr_set_sq_sig_all"),
	symQPInitAttrSetSQWR:           inVerbs("doca_verbs_qp_init_attr_set_sq_wr"),
	symQPInitAttrSetRQWR:           inVerbs("doca_verbs_qp_init_attr_set_rq_wr"),
	symQPInitAttrSetSendMaxSGEs:    inVerbs("doca_verbs_qp_init_attr_set_send_max_sges"),
	symQPInitAttrSetReceiveMaxSGEs: inVerbs("doca_verbs_qp_init_attr_set_receive_max_sges"),
	symQPInitAttrSetMaxInlineData:  inVerbs("doca_verbs_qp_init_attr_set_max_inline_data"),
	symQPInitAttrSetUserIndex:      inVerbs("doca_verbs_qp_init_attr_set_user_index"),
	symQPInitAttrSetQPType:         inVerbs("doca_verbs_qp_init_attr_set_qp_type"),
	symQPInitAttrSetExternalUMEM:   inVerbs("doca_verbs_qp_init_attr_set_external_umem"),
	// The SDK keeps the 2.x name of ..._set_external_umem_dbr.
	symQPInitAttrSetExternalDBRUMEM:    inVerbs("doca_verbs_qp_init_attr_set_external_dbr_umem"),
	symQPInitAttrGetExternalUMEM:       inVerbs("doca_verbs_qp_init_attr_get_external_umem"),
	symQPInitAttrSetExternalDatapathEn: inVerbs("doca_verbs_qp_init_attr_set_external_datapath_en"),
	symQPInitAttrSetExternalUAR:        inVerbs("doca_verbs_qp_init_attr_set_external_uar"),
	symQPInitAttrGetExternalUAR:        inVerbs("doca_verbs_qp_init_attr_get_external_uar"),
	symQPInitAttrSetQPContext:          inVerbs("doca_verbs_qp_init_attr_set_qp_context"),
	symQPInitAttrSetSRQ:                inVerbs("doca_verbs_qp_init_attr_set_srq"),
	symQPInitAttrSetCoreDirectMaster:   inVerbs("doca_verbs_qp_init_attr_set_core_direct_master"),
	symQPInitAttrSetSendDBRMode:        inVerbs("doca_verbs_qp_init_attr_set_send_dbr_mode"),
	symQPInitAttrGetSendDBRMode:        inVerbs("doca_verbs_qp_init_attr_get_send_dbr_mode"),

	symQPAttrCreate:              inVerbs("doca_verbs_qp_attr_create"),
	symQPAttrDestroy:             inVerbs("doca_verbs_qp_attr_destroy"),
	symQPAttrSetNextState:        inVerbs("doca_verbs_qp_attr_set_next_state"),
	symQPAttrSetCurrentState:     inVerbs("doca_verbs_qp_attr_set_current_state"),
	symQPAttrGetCurrentState:     inVerbs("doca_verbs_qp_attr_get_current_state"),
	symQPAttrSetPathMTU:          inVerbs("doca_verbs_qp_attr_set_path_mtu"),
	symQPAttrSetRQPSN:            inVerbs("doca_verbs_qp_attr_set_rq_psn"),
	symQPAttrSetSQPSN:            inVerbs("doca_verbs_qp_attr_set_sq_psn"),
	symQPAttrSetDestQPNum:        inVerbs("doca_verbs_qp_attr_set_dest_qp_num"),
	symQPAttrSetAllowRemoteWrite: inVerbs("doca_verbs_qp_attr_set_allow_remote_write"),
	symQPAttrSetAllowRemoteRead:  inVerbs("doca_verbs_qp_attr_set_allow_remote_read"),
	symQPAttrSetAtomicMode:       inVerbs("doca_verbs_qp_attr_set_atomic_mode"),
	symQPAttrSetAHAttr:           inVerbs("doca_verbs_qp_attr_set_ah_attr"),
	symQPAttrSetPKeyIndex:        inVerbs("doca_verbs_qp_attr_set_pkey_index"),
	symQPAttrSetPortNum:          inVerbs("doca_verbs_qp_attr_set_port_num"),
	symQPAttrSetAckTimeout:       inVerbs("doca_verbs_qp_attr_set_ack_timeout"),
	symQPAttrSetRetryCnt:         inVerbs("doca_verbs_qp_attr_set_retry_cnt"),
	symQPAttrSetRNRRetry:         inVerbs("doca_verbs_qp_attr_set_rnr_retry"),
	symQPAttrSetMinRNRTimer:      inVerbs("doca_verbs_qp_attr_set_min_rnr_timer"),
	symQPAttrSetMaxRDAtomic:      inVerbs("doca_verbs_qp_attr_set_max_rd_atomic"),
	symQPAttrSetMaxDestRDAtomic:  inVerbs("doca_verbs_qp_attr_set_max_dest_rd_atomic"),

	symAHAttrCreate:          inVerbs("doca_verbs_ah_attr_create"),
	symAHAttrDestroy:         inVerbs("doca_verbs_ah_attr_destroy"),
	symAHAttrSetGID:          inVerbs("doca_verbs_ah_attr_set_gid"),
	symAHAttrSetAddrType:     inVerbs("doca_verbs_ah_attr_set_addr_type"),
	symAHAttrSetDLID:         inVerbs("doca_verbs_ah_attr_set_dlid"),
	symAHAttrSetSL:           inVerbs("doca_verbs_ah_attr_set_sl"),
	symAHAttrSetSGIDIndex:    inVerbs("doca_verbs_ah_attr_set_sgid_index"),
	symAHAttrSetStaticRate:   inVerbs("doca_verbs_ah_attr_set_static_rate"),
	symAHAttrSetHopLimit:     inVerbs("doca_verbs_ah_attr_set_hop_limit"),
	symAHAttrSetTrafficClass: inVerbs("doca_verbs_ah_attr_set_traffic_class"),

	symQPCreate:               inVerbs("doca_verbs_qp_create"),
	symQPDestroy:              inVerbs("doca_verbs_qp_destroy"),
	symQPModify:               inVerbs("doca_verbs_qp_modify"),
	symQPQuery:                inVerbs("doca_verbs_qp_query"),
	symQPGetWQ:                inVerbs("doca_verbs_qp_get_wq"),
	symQPInitAttrGetQPContext: inVerbs("doca_verbs_qp_init_attr_get_qp_context"),
	symQPGetDBRAddr:           inVerbs("doca_verbs_qp_get_dbr_addr"),
	symQPGetUARAddr:           inVerbs("doca_verbs_qp_get_uar_addr"),
	symQPGetQPN:               inVerbs("doca_verbs_qp_get_qpn"),

	symQPInitAttrSetOrderingSemantic: {name: "doca_verbs_qp_init_attr_set_ordering_semantic", lib: libVerbs, group: groupVerbsDev, optional: true},
	symQPInitAttrGetOrderingSemantic: {name: "doca_verbs_qp_init_attr_get_ordering_semantic", lib: libVerbs, group: groupVerbsDev, optional: true},
}

// resolvedOnly are mandatory entry points that the reference resolves but
// never calls, so they take part in the mode decision but have no wrapper
// here (their SDK parameter lists are not part of what we rely on).
var resolvedOnly = map[sym]bool{
	symQPInitAttrGetExternalUMEM: true,
	symQPInitAttrGetExternalUAR:  true,
	symQPInitAttrSetSRQ:          true,
}

// String is the SDK function's name.
func (s sym) String() string {
	if s >= 0 && s < symCount {
		return symbols[s].name
	}
	return "docasdk.sym(?)"
}

// Symbols lists the SDK entry points that SDK mode needs, in resolution
// order: every mandatory one (all must resolve for SDK mode) and then the
// optional ones. For the doctor and for tests.
func Symbols() (mandatory, optional []string) {
	for _, s := range symbols {
		if s.optional {
			optional = append(optional, s.name)
		} else {
			mandatory = append(mandatory, s.name)
		}
	}
	return mandatory, optional
}
