import ArgumentParser
import PushHTTP

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print PushFleet's version and the versions of the C libraries this binary loaded (librdkafka, libcurl + nghttp2, OpenSSL, libpq).")

    func run() {
        for (name, version) in BuildInfo.components() {
            switch name {
            case "version": say("pushfleet \(version)")
            case "libcurl": say("libcurl \(version)" + (CurlLibrary.tlsVersion.map { " (TLS: \($0))" } ?? ""))
            default: say("\(name) \(version)")
            }
        }
    }
}
