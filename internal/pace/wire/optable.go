package wire

var (
	okErr       = Statuses(StatusOk, StatusError)
	okMissErr   = Statuses(StatusOk, StatusMiss, StatusError)
	okErrProg   = Statuses(StatusOk, StatusError, StatusProgress)
	okErrPush   = Statuses(StatusOk, StatusError, StatusPush)
	sessionCap  = uint32(0)
	unboundedRe = uint32(0)
)

// retiredOps names the retired opcodes (never reused, answered unknown-opcode).
var retiredOps = [256]string{
	0x16: "cluster-admit-client",
	0x17: "cluster-forget-client",
	0x1D: "cluster-admit-worker",
}

// opTable is pace-wire §1.12. Reply ceilings follow pace-wire §1.10; where
// pace-wire §1.10 is silent (ENROLL-CONTROL, SUBSCRIBE, FLEET-TEXT: reports;
// CORDON, EXPLAIN-ADMISSION: small fixed bodies) the choice is noted in the
// row.
var opTable = func() [256]OpInfo {
	var t [256]OpInfo
	rows := []OpInfo{
		{OpStore, "STORE", 5, sessionCap, okErr, GateNone, FamilyCache, MaxReportReply},
		{OpFetch, "FETCH", 1, sessionCap, okMissErr, GateNone, FamilyCache, unboundedRe},
		{OpAuth, "AUTH", 3, MaxAuthPayload, okErr, GatePre, FamilySession, MaxRefusalReply},
		{OpRegister, "REGISTER", 5, MaxControlPayload, okErr, GateIdentity, FamilyScheduler, MaxReportReply},
		{OpHeartbeat, "HEARTBEAT", 3, MaxControlPayload, okErr, GateIdentity, FamilyScheduler, MaxReportReply},
		{OpLease, "LEASE", 5, MaxControlPayload, okErr, GateNone, FamilyScheduler, MaxReportReply},
		{OpCompile, "COMPILE", 10, sessionCap, okErrProg, GateNone, FamilyCompile, unboundedRe},
		{OpClusterStatus, "CLUSTER-STATUS", 0, MaxControlPayload, okErr, GateNone, FamilyScheduler, MaxReportReply},
		{OpClusterSet, "CLUSTER-SET", 2, MaxControlPayload, okErr, GateOperator, FamilyScheduler, MaxReportReply},
		{OpClusterForget, "CLUSTER-FORGET", 1, MaxControlPayload, okErr, GateOperator, FamilyScheduler, MaxReportReply},
		{OpClusterAdmit, "CLUSTER-ADMIT", 3, MaxControlPayload, okErr, GateOperator, FamilyScheduler, MaxReportReply},
		{OpRelease, "RELEASE", 2, MaxControlPayload, okErr, GateNone, FamilyScheduler, MaxReportReply},
		{OpWithdraw, "WITHDRAW", 1, MaxControlPayload, okErr, GateIdentity, FamilyScheduler, MaxReportReply},
		{OpNodeStatus, "NODE-STATUS", 0, MaxControlPayload, okErr, GateNone, FamilyNode, MaxReportReply},
		{OpNodeMetrics, "NODE-METRICS", 0, MaxControlPayload, okErr, GateNone, FamilyNode, MaxReportReply},
		{OpEnroll, "ENROLL", 8, MaxEnrollPayload, okErr, GatePre, FamilyEnrollment, MaxSealedReplyPayload},
		{OpEnrollControl, "ENROLL-CONTROL", 2, MaxControlPayload, okErr, GateOperator, FamilyEnrollment, MaxReportReply},
		{OpSubscribe, "SUBSCRIBE", 3, MaxControlPayload, okErrPush, GateNone, FamilyLive, MaxReportReply},
		{OpCordon, "CORDON", 1, MaxControlPayload, okErr, GateLoopbackOnly, FamilyCompile, MaxRefusalReply},
		{OpFleetText, "FLEET-TEXT", 3, MaxControlPayload, okErr, GateNone, FamilyFleet, MaxReportReply},
		{OpCacheDrop, "CACHE-DROP", 1, MaxControlPayload, okMissErr, GateNone, FamilyCache, MaxReportReply},
		{OpNodeChallenge, "NODE-CHALLENGE", 2, MaxNodeProofPayload, okErr, GateNone, FamilyNodeProof, MaxSealedReplyPayload},
		{OpProveNode, "PROVE-NODE", 3, MaxNodeProofPayload, okErr, GateNone, FamilyNodeProof, MaxSealedReplyPayload},
		{OpNodeAnnounce, "NODE-ANNOUNCE", 4, MaxControlPayload, okErr, GateIdentity, FamilyScheduler, MaxRefusalReply},
		{OpExplainAdmission, "EXPLAIN-ADMISSION", 1, MaxExplainAdmissionPayload, okErr, GatePre, FamilyNode, MaxRefusalReply},
		{OpClusterAdmitLearner, "CLUSTER-ADMIT-LEARNER", 3, MaxControlPayload, okErr, GateOperator, FamilyScheduler, MaxReportReply},
		{OpMintTicket, "MINT-TICKET", 1, MaxMintTicketPayload, okErr, GateLoopbackOnly, FamilySession, MaxRefusalReply},
		{OpFleetSummary, "FLEET-SUMMARY", 1, MaxFleetSummaryPayload, okErr, GatePre, FamilyFormation, MaxRefusalReply},
		{OpSharedFetch, "SHARED-FETCH", 1, sessionCap, okMissErr, GateNone, FamilySharedCache, unboundedRe},
		{OpSharedStore, "SHARED-STORE", 5, sessionCap, okErr, GateNone, FamilySharedCache, MaxReportReply},
	}
	for _, r := range rows {
		t[r.Op] = r
	}
	return t
}()
