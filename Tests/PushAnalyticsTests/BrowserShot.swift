import Foundation
import PushTestSupport
import XCTest

/// A report page as people see it: Debian's headless Chromium renders it to a
/// PNG (`scripts/report-screenshot.sh`, kept under .build/ to look at), with
/// the DOM Chromium built and the pixels of each colour
/// (`scripts/png-colors.py`).
struct BrowserShot {
    /// The DOM Chromium built from the page.
    var dom: String
    /// `size WxH`, then `#rrggbb count` lines.
    var colourReport: String

    /// Renders `html` at `width`×`height` to `.build/<name>`; skips the test
    /// where Chromium is not installed (fails in CI: install-deps.sh installs it).
    static func take(_ html: String, name: String, width: Int, height: Int) throws -> BrowserShot {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                throw Failure(description: "chromium missing: scripts/install-deps.sh installs it")
            }
            throw XCTSkip("chromium is not installed")
        }
        let root = TestEnvironment.repositoryRoot.path
        let png = root + "/.build/" + name
        let dom = NSTemporaryDirectory() + "pushfleet-dom-\(UUID().uuidString).html"
        defer { try? FileManager.default.removeItem(atPath: dom) }
        let shot = try run("/bin/bash", [root + "/scripts/report-screenshot.sh", html, png, "\(width),\(height)"],
                           environment: ["DUMP_DOM": dom])
        guard shot.status == 0 else { throw Failure(description: "report-screenshot.sh exited \(shot.status): \(shot.output)") }
        let colours = try run("/usr/bin/env", ["python3", root + "/scripts/png-colors.py", png], environment: [:])
        guard colours.status == 0 else { throw Failure(description: "png-colors.py exited \(colours.status): \(colours.output)") }
        return BrowserShot(dom: try String(contentsOfFile: dom, encoding: .utf8), colourReport: colours.output)
    }

    /// How many pixels of `colour` (`#rrggbb`) the screenshot has (0 if it is not among the top 40).
    func pixels(_ colour: String) -> Int {
        colourReport.split(separator: "\n").first { $0.hasPrefix(colour + " ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        try TestEnvironment.runToEnd(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new })
    }
}
