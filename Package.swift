// swift-tools-version:6.0
import PackageDescription

// The rooms follow the data's path: bytes (CBOR) → cryptography (Crypto) →
// ISO 18013-5 structures and checks (MDoc) → events, tenants and the ordered
// verification (Verification) → the command line (Veridoc).
let package = Package(
    name: "Veridoc",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "veridoc", targets: ["Veridoc"]),
        .library(name: "Verification", targets: ["Verification"]),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CBOR"),
        .target(name: "Crypto", dependencies: ["COpenSSL"]),
        .target(name: "MDoc", dependencies: ["CBOR", "Crypto"]),
        .target(name: "Verification", dependencies: ["CBOR", "Crypto", "MDoc"]),
        .executableTarget(name: "Veridoc", dependencies: ["Verification", "MDoc", "Crypto"]),
        .target(name: "TestIssuer", dependencies: ["CBOR", "Crypto", "MDoc", "Verification"]),

        .testTarget(name: "CBORTests", dependencies: ["CBOR"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto"]),
        .testTarget(name: "MDocTests", dependencies: ["MDoc", "CBOR", "Crypto"]),
        .testTarget(name: "VerificationTests", dependencies: ["Verification", "MDoc", "CBOR", "Crypto"]),
        .testTarget(name: "TestIssuerTests", dependencies: ["TestIssuer", "Verification", "MDoc", "CBOR", "Crypto"]),
    ],
    swiftLanguageModes: [.v6]
)
