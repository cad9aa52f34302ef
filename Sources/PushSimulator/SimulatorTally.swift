/// Fast-mode stats one connection gathered since it last recorded them: the
/// same counts `SimulatorState.record(_:apnsID:)` keeps for a 200, taken into
/// the shared state under one lock per read batch instead of one per request.
struct SimulatorTally {
    /// Whether valid `apns-id`s are kept (`SimulatorConfiguration.recordSendIDs`).
    let recordSendIDs: Bool
    /// APNs sends answered 200.
    private(set) var apnsAccepted = 0
    /// FCM sends answered 200.
    private(set) var fcmAccepted = 0
    /// The valid `apns-id`s of those APNs sends, when they are recorded.
    private(set) var apnsIDs: [String] = []
    /// How many valid `apns-id`s were seen while recording is off.
    private(set) var unrecordedIDs = 0

    init(recordSendIDs: Bool) {
        self.recordSendIDs = recordSendIDs
    }

    var isEmpty: Bool { apnsAccepted == 0 && fcmAccepted == 0 }

    mutating func countAPNs(id: String?) {
        apnsAccepted += 1
        guard let id else { return }
        if recordSendIDs { apnsIDs.append(id) } else { unrecordedIDs += 1 }
    }

    mutating func countFCM() {
        fcmAccepted += 1
    }

    /// Back to zero, keeping the id array's storage.
    mutating func reset() {
        apnsAccepted = 0
        fcmAccepted = 0
        apnsIDs.removeAll(keepingCapacity: true)
        unrecordedIDs = 0
    }
}
