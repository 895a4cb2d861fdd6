import COpenSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What verification reads from a document signer certificate for every
/// event it signed: derived once per certificate, not per event. Formatting
/// the subject and extracting the public key costs more than the rest of the
/// per-event certificate work together. A class, so that reading one fact
/// per event retains one object rather than copying every field.
public final class CertificateFacts: Sendable {
    /// `subject.description`.
    public let subjectDescription: String
    /// `subject.countryName`.
    public let subjectCountry: String?
    /// Every countryName and stateOrProvinceName of the subject, in order:
    /// ISO 18013-5 Annex B compares them with the IACA's and the document's
    /// issuing_country / issuing_jurisdiction, and a name that says two
    /// countries says none.
    public let subjectCountries: [String]
    public let subjectStates: [String]
    /// `subject.commonName`.
    public let subjectCommonName: String?
    /// `publicKey()`, or why it failed.
    public let publicKey: Result<PublicKey, CryptoError>
    /// `DocumentSignerProfile.violations(of:)`.
    public let documentSignerViolations: [String]
    /// `crlDistributionPoints()`, or why it failed.
    public let crlDistributionPoints: Result<[CRLDistributionPoint], CryptoError>
    /// The serial number as `CertificateRevocationList` keys its entries.
    let revocationSerial: [UInt8]

    init(_ certificate: Certificate) {
        let subject = certificate.subject
        subjectDescription = subject.description
        subjectCountry = subject.countryName
        subjectCountries = subject.attributes.filter { $0.type == "C" }.map(\.value)
        subjectStates = subject.attributes.filter { $0.type == "ST" }.map(\.value)
        subjectCommonName = subject.commonName
        publicKey = Result { () throws(CryptoError) in try certificate.publicKey() }
        documentSignerViolations = DocumentSignerProfile.violations(of: certificate)
        crlDistributionPoints = Result { () throws(CryptoError) in try certificate.crlDistributionPoints() }
        revocationSerial = X509_get0_serialNumber(certificate.handle.pointer).map(serialKey) ?? []
    }
}

extension Certificate {
    /// The certificate's facts, computed on first use. They live as long as the
    /// certificate, so they are bounded by whatever bounds the certificates
    /// (the process-wide `Certificate.cached(der:)` cache for received ones).
    public var facts: CertificateFacts {
        handle.facts.value { CertificateFacts(self) }
    }
}

/// A value computed once, on first use, by whichever thread asks first.
final class LazyFacts: @unchecked Sendable {
    // Guarded by `mutex`.
    private var stored: CertificateFacts?
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func value(_ compute: () -> CertificateFacts) -> CertificateFacts {
        pthread_mutex_lock(mutex)
        if let stored {
            pthread_mutex_unlock(mutex)
            return stored
        }
        pthread_mutex_unlock(mutex)
        // Computed outside the lock (it calls into OpenSSL); a racing thread
        // computes the same value and the first one stored wins.
        let computed = compute()
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if let stored { return stored }
        stored = computed
        return computed
    }
}
