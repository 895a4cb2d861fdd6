// libFuzzer target: a whole verification against one fixed tenant.
// The first input byte chooses what the rest is:
//   0 — the event JSON, parsed and verified as `veridoc verify` would;
//   1 — the DeviceResponse of a valid iso-device-response event;
//   2 — the Annex C plaintext of a valid apple-wallet-web event (sealed to the merchant here);
//   3 — the `identity` of a valid apple-wallet-app event (sealed to the merchant here);
//   4 — the presentation of a valid openid4vp-dc-api event (sealed in a JWE to the merchant here).
// Modes 1–4 reach the deep DeviceResponse/MSO/COSE checks without forging JSON, HPKE or JOSE.
// Mutations are partly structural (Fuzz/StructureMutator.swift), and one
// input may hold no more than `HeapBudget.limit` of heap at once.
// With VERIDOC_FUZZ_SEEDS=DIR set, the binary writes every target's seeds and exits.
import Foundation
import Verification

enum Target: FuzzTarget {
    static let name: StaticString = "verify"

    static func prepare() {
        let environment = ProcessInfo.processInfo.environment
        if let directory = environment["VERIDOC_FUZZ_SEEDS"] {
            do {
                try SeedWriter.write(to: directory, vectors: environment["VERIDOC_FUZZ_VECTORS"])
            } catch {
                FileHandle.standardError.write(Data("seed writer: \(error)\n".utf8))
                exit(1)
            }
            exit(0)
        }
        _ = Fixture.shared
    }

    static func run(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let fixture = Fixture.shared
        let rest = Array(input.dropFirst())
        let result: VerificationResult
        switch mode % 5 {
        case 0: result = fixture.verifier.verify(eventJSON: rest, at: fixture.now)
        case 1: result = fixture.verifier.verify(fixture.request(.isoDeviceResponse, deviceResponse: rest), at: fixture.now)
        case 2: result = fixture.verifier.verify(fixture.request(.appleWalletWeb, deviceResponse: rest), at: fixture.now)
        case 3: result = fixture.verifier.verify(fixture.request(.appleWalletApp, deviceResponse: rest), at: fixture.now)
        default: result = fixture.verifier.verify(fixture.request(.openID4VPDCAPI, deviceResponse: rest), at: fixture.now)
        }
        // Building the outcome is part of what the worker does with every result.
        _ = OutcomeEvent(result).json()
    }
}

@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    StructureMutator.mutate(data, size, maxSize, seed, modeByte: true) { $0 % 5 == 0 ? .json : .cbor }
}
