/// The checks of a verification, in one list that is both the order they run
/// in and the order they are reported in; the reason codes are reported in
/// the order the checks declare them. Adding a check: a type in this folder,
/// its line here, its case in `CheckName` (and any new code in `ReasonCode`),
/// its fixture and its row in Schemas/reason-codes.md.
public enum VerificationPolicy {
    public static let checks: [any VerificationCheck.Type] = [
        EventStructureCheck.self,
        EventTenantCheck.self,
        PayloadStructureCheck.self,
        PayloadTranscriptCheck.self,
        PayloadReaderCheck.self,
        DecryptionKeyCheck.self,
        DecryptionTranscriptCheck.self,
        DecryptionOpenCheck.self,
        ResponseDocumentsCheck.self,
        ResponseRequestCheck.self,
        IssuerChainCheck.self,
        IssuerCertificateCheck.self,
        IssuerSignatureCheck.self,
        IssuerAuthorityCheck.self,
        MSOStructureCheck.self,
        MSODocTypeCheck.self,
        MSOValidityCheck.self,
        MSODigestsCheck.self,
        MSOElementTypesCheck.self,
        DeviceAuthenticationCheck.self,
        // Reads the reference here; the status service records it (`VerificationResult.recordingStatus`).
        DocumentStatusCheck.self,
        // After the documents: it compares what each disclosed with what the query asked.
        ResponseQueryCheck.self,
        RequestIssuedNonceCheck.self,
        RequestAgeCheck.self,
        // Applied when the result is stored (the worker's nonce store), after every other.
        RequestNonceCheck.self,
    ]

    /// The reason codes in report order: each check's, in list order, each code once.
    static let reasonOrder: [ReasonCode] = {
        var order: [ReasonCode] = []
        for check in checks {
            for code in check.reasons where !order.contains(code) { order.append(code) }
        }
        return order
    }()

    /// Whether `check` declares `code`; `CheckReport.fail` asserts it.
    static func declares(_ check: CheckName, _ code: ReasonCode) -> Bool {
        declared[check.rank].contains(code)
    }

    private static let declared: [Set<ReasonCode>] = checks.map { check in Set(check.reasons) }

    static let requiredForVerified: [Bool] = checks.map { check in check.isRequiredForVerified }

    /// Runs the request's checks in list order; a block of consecutive
    /// document checks runs for each document in turn, so that one document's
    /// findings come before the next one's.
    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        for step in plan {
            switch step {
            case .request(let check): check.run(&request, into: &report)
            case .documents(let checks): request.verifyDocuments(with: checks, into: &report)
            }
        }
    }

    private enum Step {
        case request(any RequestCheck.Type)
        case documents([any DocumentCheck.Type])
    }

    /// `checks` as steps, worked out once: checks recorded by their owner
    /// (the nonce store) are left out.
    private static let plan: [Step] = {
        var steps: [Step] = []
        for check in checks {
            if let check = check as? any RequestCheck.Type {
                steps.append(.request(check))
            } else if let check = check as? any DocumentCheck.Type {
                if case .documents(let block)? = steps.last {
                    steps[steps.count - 1] = .documents(block + [check])
                } else {
                    steps.append(.documents([check]))
                }
            }
        }
        return steps
    }()
}
