/// The catalogue's files as compiled in (Package.swift embeds each; a file
/// added there is listed here).
enum CatalogueFiles {
    static let all: [(name: String, bytes: [UInt8])] = [
        ("mdl.json", PackageResources.mdl_json),
        ("photoid.json", PackageResources.photoid_json),
        ("jp-mnc.json", PackageResources.jp_mnc_json),
        ("eu-pid.json", PackageResources.eu_pid_json),
        ("eu-av.json", PackageResources.eu_av_json),
    ]
}
