import Foundation
import Testing
@testable import Retention
@testable import Verification

/// The precedence of docs/retention.md, case by case, with exact retain_until.
struct RetentionPolicyTests {
    static let base = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15T15:06:40Z
    static let ns = "org.iso.18013.5.1"
    static func days(_ n: Int) -> Expiry { .at(base.addingTimeInterval(TimeInterval(n) * 86_400)) }
    static func asked(_ element: String, _ retention: Retention) -> RequestedElement {
        RequestedElement(namespace: ns, element: element, retention: retention)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let requested: [RequestedElement]
        let tenant: TenantRetention
        let expected: RetentionDecision
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "request mayStore 30, no tenant policy", requested: [asked("given_name", .mayStore(days: 30))], tenant: .none,
             expected: RetentionDecision(retention: .mayStore(days: 30), source: .request, capped: false, expiry: days(30))),
        Case(name: "request willNotStore", requested: [asked("given_name", .willNotStore)], tenant: .none,
             expected: RetentionDecision(retention: .willNotStore, source: .request, capped: false, expiry: nil)),
        Case(name: "request unlimited, no cap", requested: [asked("given_name", .mayStore(days: nil))], tenant: .none,
             expected: RetentionDecision(retention: .mayStore(days: nil), source: .request, capped: false, expiry: .never)),
        Case(name: "request unlimited, cap 90", requested: [asked("given_name", .mayStore(days: nil))], tenant: TenantRetention(maxDays: 90, defaults: []),
             expected: RetentionDecision(retention: .mayStore(days: 90), source: .request, capped: true, expiry: days(90))),
        Case(name: "request 365 over cap 90", requested: [asked("given_name", .mayStore(days: 365))], tenant: TenantRetention(maxDays: 90, defaults: []),
             expected: RetentionDecision(retention: .mayStore(days: 90), source: .request, capped: true, expiry: days(90))),
        Case(name: "request 30 under cap 90", requested: [asked("given_name", .mayStore(days: 30))], tenant: TenantRetention(maxDays: 90, defaults: []),
             expected: RetentionDecision(retention: .mayStore(days: 30), source: .request, capped: false, expiry: days(30))),
        Case(name: "request 30, tenant default 7 is stricter",
             requested: [asked("given_name", .mayStore(days: 30))],
             tenant: TenantRetention(maxDays: nil, defaults: [.init(namespace: ns, element: "given_name", retention: .mayStore(days: 7))]),
             expected: RetentionDecision(retention: .mayStore(days: 7), source: .tenantDefault, capped: false, expiry: days(7))),
        Case(name: "request 7, tenant default 30 is looser",
             requested: [asked("given_name", .mayStore(days: 7))],
             tenant: TenantRetention(maxDays: nil, defaults: [.init(namespace: ns, element: "given_name", retention: .mayStore(days: 30))]),
             expected: RetentionDecision(retention: .mayStore(days: 7), source: .request, capped: false, expiry: days(7))),
        Case(name: "request mayStore, tenant default willNotStore",
             requested: [asked("given_name", .mayStore(days: 7))],
             tenant: TenantRetention(maxDays: nil, defaults: [.init(namespace: ns, element: "*", retention: .willNotStore)]),
             expected: RetentionDecision(retention: .willNotStore, source: .tenantDefault, capped: false, expiry: nil)),
        Case(name: "not requested although others were; tenant default ignored",
             requested: [asked("age_over_21", .willNotStore)],
             tenant: TenantRetention(maxDays: nil, defaults: [.init(namespace: ns, element: "given_name", retention: .mayStore(days: 30))]),
             expected: RetentionDecision(retention: .willNotStore, source: .notRequested, capped: false, expiry: nil)),
        Case(name: "no request list, exact tenant default",
             requested: [],
             tenant: TenantRetention(maxDays: nil, defaults: [
                .init(namespace: ns, element: "*", retention: .mayStore(days: 1)),
                .init(namespace: ns, element: "given_name", retention: .mayStore(days: 14)),
             ]),
             expected: RetentionDecision(retention: .mayStore(days: 14), source: .tenantDefault, capped: false, expiry: days(14))),
        Case(name: "no request list, namespace wildcard",
             requested: [], tenant: TenantRetention(maxDays: nil, defaults: [.init(namespace: ns, element: "*", retention: .mayStore(days: 3))]),
             expected: RetentionDecision(retention: .mayStore(days: 3), source: .tenantDefault, capped: false, expiry: days(3))),
        Case(name: "no request list, global wildcard unlimited capped",
             requested: [], tenant: TenantRetention(maxDays: 10, defaults: [.init(namespace: "*", element: "*", retention: .mayStore(days: nil))]),
             expected: RetentionDecision(retention: .mayStore(days: 10), source: .tenantDefault, capped: true, expiry: days(10))),
        Case(name: "no request list, no tenant default", requested: [], tenant: TenantRetention(maxDays: 10, defaults: []),
             expected: RetentionDecision(retention: .willNotStore, source: .none, capped: false, expiry: nil)),
    ]

    @Test(arguments: cases)
    func precedence(_ example: Case) {
        let decision = RetentionPolicy.decide(namespace: Self.ns, element: "given_name", requested: example.requested, tenant: example.tenant, base: Self.base)
        #expect(decision == example.expected)
    }

    @Test func exactRetainUntil() {
        let decision = RetentionPolicy.decide(
            namespace: Self.ns, element: "given_name", requested: [Self.asked("given_name", .mayStore(days: 1))], tenant: .none, base: Self.base)
        #expect(decision.expiry == .at(Date(timeIntervalSince1970: 1_750_086_400)))
    }
}
