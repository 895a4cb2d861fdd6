import MDoc

extension CheckReport {
    /// The algorithm a COSE_Sign1 names in its protected header, or nil after
    /// failing `check`: as `payload.unsupported` for an algorithm or critical
    /// header Veridoc does not implement, else with `invalid`.
    mutating func algorithm(of signature: COSESign1, context: String, failing check: CheckName, invalid: ReasonCode) -> COSESignatureAlgorithm? {
        do {
            return try signature.algorithm(context: context)
        } catch {
            fail(check, error.isUnsupported ? .payloadUnsupported : invalid, error.detail)
            return nil
        }
    }
}
