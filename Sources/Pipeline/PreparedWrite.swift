import Foundation
import Retention
import Storage
import Verification

/// The part of storing a result that needs no database — the outcome event's
/// JSON (with its sealed claims) and the encrypted value rows — done on the
/// verification pool's threads, in parallel, so that the persister's single
/// thread only talks to PostgreSQL.
///
/// The nonce decision is the one input not known yet: the outcome is encoded
/// as it reads when the nonce is fresh, which is nearly always; the persister
/// encodes again only for the rare result the nonce check turns into a replay.
struct PreparedWrite: Sendable {
    /// The outcome if the nonce is fresh; nil for results without a request id.
    let outcome: EncodedOutcome?
    /// Sealed mayStore values (empty unless verified); nil if sealing failed,
    /// in which case the persister seals again and reports the failure there.
    let values: RetentionWriter.ValueRows?
    /// The result row's `element_groups` (names and retention decisions):
    /// built here, it is no part of the persister thread's time.
    let elementGroups: ElementGroupsColumn.Value

    init(result: VerificationResult, retention: RetentionWriter) {
        let fresh = ResultStore.consumesNonce(result) ? result.recordingNonceCheck(reused: false) : result
        outcome = fresh.requestID.map { _ in EncodedOutcome(fresh, retention: retention) }
        // The nonce check changes neither the elements nor the request, so
        // both kinds of row share one set of decisions.
        let decided = retention.decisions(for: result)
        elementGroups = ElementGroupsColumn.Value(retention.elementGroups(for: result, decided: decided))
        values = result.isAccepted ? try? retention.valueRows(for: result, decided: decided, storedAt: Date()) : RetentionWriter.ValueRows()
    }
}

/// An outcome CloudEvent as its outbox row needs it.
struct EncodedOutcome: Sendable {
    let json: String
    let hasClaims: Bool

    init(_ result: VerificationResult, retention: RetentionWriter) {
        let encoded = OutcomeEvent(result, claimsRecipient: retention.outcomeRecipient(for: result)).encoded()
        json = encoded.json
        hasClaims = encoded.hasClaims
    }
}
