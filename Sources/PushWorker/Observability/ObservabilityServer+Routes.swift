import NIOCore
import NIOHTTP1

/// What each path answers; pure apart from reading the registry and health.
struct ObservabilityRoutes: Sendable {
    let exposition: PrometheusExposition
    let health: HealthState
    let beforeScrape: (@Sendable () -> Void)?

    struct Response {
        var status: HTTPResponseStatus
        var contentType: String
        var body: [UInt8]
        var extraHeaders: [(String, String)] = []
    }

    func respond(method: HTTPMethod, uri: String) -> Response {
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? uri
        let known = path == "/metrics" || path == "/health/live" || path == "/health/ready"
        guard known else { return Self.text(.notFound, "not found\n") }
        guard method == .GET else {
            var response = Self.text(.methodNotAllowed, "method not allowed\n")
            response.extraHeaders = [("Allow", "GET")]
            return response
        }
        switch path {
        case "/metrics":
            beforeScrape?()
            return Response(status: .ok, contentType: PrometheusExposition.contentType, body: exposition.render())
        case "/health/live":
            let snapshot = health.snapshot()
            return Self.json(snapshot.live ? .ok : .serviceUnavailable, snapshot.json())
        default:
            let snapshot = health.snapshot()
            // One JSON shape for both probes and both answers, so probes and people parse one thing.
            return Self.json(snapshot.ready ? .ok : .serviceUnavailable, snapshot.json())
        }
    }

    private static func text(_ status: HTTPResponseStatus, _ body: String) -> Response {
        Response(status: status, contentType: "text/plain; charset=utf-8", body: Array(body.utf8))
    }

    private static func json(_ status: HTTPResponseStatus, _ body: String) -> Response {
        Response(status: status, contentType: "application/json", body: Array((body + "\n").utf8))
    }
}
