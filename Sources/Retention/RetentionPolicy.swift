import Foundation
import Verification

/// Where an element's retention intent came from (column `element_groups.retention_source`).
public enum RetentionSource: String, Sendable, Hashable, CaseIterable {
    /// The event's `requestedElements` named the element and its intent stood.
    case request
    /// The tenant's `retentionDefaults` filled in (the request named no
    /// elements) or was stricter than the request.
    case tenantDefault = "tenant-default"
    /// Disclosed although the request's list did not name it: never kept.
    case notRequested = "not-requested"
    /// Neither the request nor the tenant said anything: never kept.
    case none
}

/// When a kept value expires.
public enum Expiry: Sendable, Hashable {
    case at(Date)
    /// mayStore without a limit and no tenant cap: stored with retain_until 'infinity'.
    case never
}

/// The retention one disclosed element gets.
public struct RetentionDecision: Sendable, Hashable {
    /// The intent after precedence and the cap.
    public let retention: Retention
    public let source: RetentionSource
    /// The tenant's `maxRetentionDays` shortened the intent.
    public let capped: Bool
    /// nil: the value is never stored (willNotStore).
    public let expiry: Expiry?
}

/// The precedence rules of docs/retention.md, as one pure function so they
/// can be tested case by case:
///
/// 1. The request's intent for the element, if its `requestedElements` names it.
///    If the list is non-empty but lacks the element: willNotStore ("not-requested").
///    If the list is empty: the tenant's default, else willNotStore ("none").
/// 2. A tenant default for the element that is stricter than the request's intent wins.
/// 3. `maxRetentionDays` caps mayStore (unlimited becomes the cap).
/// 4. retain_until = `base` + days × 86 400 s; unlimited → never; willNotStore → not stored.
public enum RetentionPolicy {
    public static let secondsPerDay: TimeInterval = 86_400

    public static func decide(
        namespace: String, element: String, requested: [RequestedElement], tenant: TenantRetention, base: Date
    ) -> RetentionDecision {
        decide(namespace: namespace, element: element, asked: RequestedElementIndex(requested)[namespace: namespace, element: element],
               anyRequested: !requested.isEmpty, tenant: tenant, base: base)
    }

    /// The same rules for a caller that has already looked the element up in
    /// the request (`asked`, nil if absent).
    public static func decide(
        namespace: String, element: String, asked: RequestedElement?, anyRequested: Bool, tenant: TenantRetention, base: Date
    ) -> RetentionDecision {
        let tenantDefault = tenant.defaultRetention(namespace: namespace, element: element)
        var retention: Retention
        var source: RetentionSource
        if let asked {
            retention = asked.retention
            source = .request
            if let tenantDefault, isStricter(tenantDefault, than: retention) {
                retention = tenantDefault
                source = .tenantDefault
            }
        } else if anyRequested {
            retention = .willNotStore
            source = .notRequested
        } else if let tenantDefault {
            retention = tenantDefault
            source = .tenantDefault
        } else {
            retention = .willNotStore
            source = .none
        }

        var capped = false
        if let cap = tenant.maxDays, case .mayStore(let days) = retention, days.map({ $0 > cap }) ?? true {
            retention = .mayStore(days: cap)
            capped = true
        }
        let expiry: Expiry? = switch retention {
        case .willNotStore: nil
        case .mayStore(let days?): .at(base.addingTimeInterval(TimeInterval(days) * secondsPerDay))
        case .mayStore(nil): .never
        }
        return RetentionDecision(retention: retention, source: source, capped: capped, expiry: expiry)
    }

    /// willNotStore < mayStore(fewer days) < mayStore(more days) < mayStore(no limit).
    static func isStricter(_ lhs: Retention, than rhs: Retention) -> Bool {
        rank(lhs) < rank(rhs)
    }

    private static func rank(_ retention: Retention) -> Int {
        switch retention {
        case .willNotStore: 0
        case .mayStore(let days?): days
        case .mayStore(nil): Int.max
        }
    }
}
