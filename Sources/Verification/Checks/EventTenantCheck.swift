/// `event.tenant`: the tenant is configured and the request may speak for it,
/// through identifiers the tenant owns (merchant ID, origin) and with the keys
/// its flow needs.
enum EventTenantCheck: RequestCheck {
    static let name = CheckName.eventTenant
    static let reasons: [ReasonCode] = [.eventUnknownTenant]

    static func run(_ request: inout RequestUnderVerification, into report: inout CheckReport) {
        guard let tenant = request.configuredTenant else {
            report.fail(name, .eventUnknownTenant, "tenant \(request.request.tenant) is not configured")
            return
        }
        if let problem = attributionProblem(request.request, tenant) {
            report.fail(name, .eventUnknownTenant, problem)
        } else {
            report.pass(name)
            request.tenant = tenant
        }
    }

    private static func attributionProblem(_ request: VerificationRequest, _ tenant: Tenant) -> String? {
        switch request.input {
        case .appleWalletApp(_, _, _, let merchantID):
            if !tenant.owns(merchantID: merchantID) { return "merchantId is not one of tenant \(tenant.id)'s merchant IDs" }
            if tenant.teamID == nil { return "tenant \(tenant.id) has no teamId for apple-wallet-app requests" }
        case .appleWalletWeb(_, _, _, let origin):
            if !tenant.owns(origin: origin) { return "origin is not one of tenant \(tenant.id)'s origins" }
            if tenant.keys.isEmpty { return "tenant \(tenant.id) has no encryption keys" }
        case .openID4VPDCAPI(let origin, _, _, _):
            // No key needed here: a session's response key is derived from its nonce.
            if !tenant.owns(origin: origin) { return "origin is not one of tenant \(tenant.id)'s origins" }
        case .isoDeviceResponse:
            break
        }
        if request.flow == .appleWalletApp && tenant.keys.isEmpty { return "tenant \(tenant.id) has no encryption keys" }
        return nil
    }
}
