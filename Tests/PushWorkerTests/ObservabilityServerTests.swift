import Foundation
import Logging
import PushCore
import ServiceLifecycle
import XCTest

@testable import PushWorker

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The observability listener on port 0, asked over real HTTP/1.1.
final class ObservabilityServerTests: XCTestCase {
    private struct Reply {
        var status: Int
        var contentType: String?
        var allow: String?
        var body: String
    }

    private func request(_ port: Int, _ path: String, method: String = "GET") async throws -> Reply {
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)\(path)"))
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
        request.httpMethod = method
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                guard let http = response as? HTTPURLResponse else {
                    return continuation.resume(throwing: URLError(.badServerResponse))
                }
                continuation.resume(returning: Reply(
                    status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"),
                    allow: http.value(forHTTPHeaderField: "Allow"), body: String(decoding: data ?? Data(), as: UTF8.self)))
            }.resume()
        }
    }

    private func json(_ reply: Reply) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(reply.body.utf8))
        return try XCTUnwrap(object as? [String: Any], reply.body)
    }

    /// Starts a server on port 0 with a movable health clock; returns its port and task.
    private func start(health: HealthState, exposition: PrometheusExposition)
        async throws -> (ObservabilityServer, Int, Task<Void, any Error>)
    {
        let server = ObservabilityServer(host: "127.0.0.1", port: 0, exposition: exposition, health: health,
                                         logger: Logger(label: "test.observability"))
        let task = Task { try await server.run() }
        let port = try await server.boundPort()
        XCTAssertGreaterThan(port, 0)
        return (server, port, task)
    }

    func testEndpointsFollowHealthAndServeMetrics() async throws {
        let clock = ManualInstant()
        let health = HealthState(livenessWindow: .seconds(30), now: { clock.now })
        let exposition = PrometheusExposition()
        let metrics = WorkerMetrics(factory: exposition.factory)
        metrics.consumed(topic: "push.notifications", count: 3)
        let (_, port, task) = try await start(health: health, exposition: exposition)
        defer { task.cancel() }

        let scrape = try await request(port, "/metrics")
        XCTAssertEqual(scrape.status, 200)
        XCTAssertEqual(scrape.contentType, "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertTrue(scrape.body.contains("pushfleet_messages_consumed_total{topic=\"push.notifications\"} 3\n"), scrape.body)

        // Started, nothing assigned, PostgreSQL not yet seen: live, not ready.
        let live = try await request(port, "/health/live")
        XCTAssertEqual(live.status, 200)
        XCTAssertEqual(live.contentType, "application/json")
        XCTAssertEqual(try json(live)["live"] as? Bool, true)
        XCTAssertEqual(try json(live)["ready"] as? Bool, false, "one shape: live answers carry ready too")
        let notReady = try await request(port, "/health/ready")
        XCTAssertEqual(notReady.status, 503)
        XCTAssertEqual(notReady.contentType, "application/json")
        let body = try json(notReady)
        XCTAssertEqual(body["ready"] as? Bool, false)
        XCTAssertEqual(body["partitions_assigned"] as? Int, 0)
        XCTAssertEqual(body["postgres"] as? String, "unreachable")

        health.setPartitionsAssigned(2)
        health.setPostgresReachable(true)
        health.heartbeat()
        let ready = try await request(port, "/health/ready?verbose=1")
        XCTAssertEqual(ready.status, 200)
        XCTAssertEqual(ready.contentType, "application/json", "ready answers JSON too, with the same keys")
        let readyBody = try json(ready)
        XCTAssertEqual(Set(readyBody.keys), Set(body.keys))
        XCTAssertEqual(readyBody["ready"] as? Bool, true)
        XCTAssertEqual(readyBody["stopping"] as? Bool, false)

        // The poll loop stops beating: neither live nor ready.
        clock.advance(.seconds(31))
        let wedged = try await request(port, "/health/live")
        XCTAssertEqual(wedged.status, 503)
        XCTAssertEqual(try json(wedged)["live"] as? Bool, false)
        let wedgedReady = try await request(port, "/health/ready")
        XCTAssertEqual(wedgedReady.status, 503)
        XCTAssertEqual(try json(wedgedReady)["partitions_assigned"] as? Int, 2)

        // It beats again.
        health.heartbeat()
        let back = try await request(port, "/health/ready")
        XCTAssertEqual(back.status, 200)
    }

    func testScrapeRunsTheExportHookFirst() async throws {
        let exposition = PrometheusExposition()
        let metrics = WorkerMetrics(factory: exposition.factory)
        let totals = Locked(WorkerCounters())
        let server = ObservabilityServer(host: "127.0.0.1", port: 0, exposition: exposition, health: HealthState(),
                                         logger: Logger(label: "test.observability"),
                                         beforeScrape: { metrics.export(totals.withLock { $0 }) })
        let task = Task { try await server.run() }
        defer { task.cancel() }
        let port = try await server.boundPort()
        totals.withLock { $0.suppressed = 6 }
        let first = try await request(port, "/metrics")
        XCTAssertTrue(first.body.contains("pushfleet_suppressed_duplicates_total 6\n"), first.body)
        totals.withLock { $0.suppressed = 9 }
        let second = try await request(port, "/metrics")
        XCTAssertTrue(second.body.contains("pushfleet_suppressed_duplicates_total 9\n"), second.body)
    }

    func testUnknownPathsAndMethods() async throws {
        let (_, port, task) = try await start(health: HealthState(), exposition: PrometheusExposition())
        defer { task.cancel() }
        let missing = try await request(port, "/nope")
        XCTAssertEqual(missing.status, 404)
        let post = try await request(port, "/metrics", method: "POST")
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(post.allow, "GET")
        let delete = try await request(port, "/health/ready", method: "DELETE")
        XCTAssertEqual(delete.status, 405)
    }

    func testStoppingClosesTheListener() async throws {
        let (_, port, task) = try await start(health: HealthState(), exposition: PrometheusExposition())
        let before = try await request(port, "/health/live")
        XCTAssertEqual(before.status, 200)
        task.cancel()
        try await task.value  // run() returns once the channel is closed
        do {
            let after = try await request(port, "/health/live")
            XCTFail("listener still answers after stop: \(after.status)")
        } catch {
            // Connection refused: the socket is closed.
        }
    }

    func testGracefulShutdownInAServiceGroupClosesTheListener() async throws {
        let server = ObservabilityServer(host: "127.0.0.1", port: 0, exposition: PrometheusExposition(),
                                         health: HealthState(), logger: Logger(label: "test.observability"))
        let group = ServiceGroup(services: [server], logger: Logger(label: "test.group"))
        let run = Task { try await group.run() }
        let port = try await server.boundPort()
        let before = try await request(port, "/health/live")
        XCTAssertEqual(before.status, 200)
        await group.triggerGracefulShutdown()
        try await run.value
        do {
            let after = try await request(port, "/metrics")
            XCTFail("listener still answers after graceful shutdown: \(after.status)")
        } catch {}
    }

    func testBindFailureIsReportedToWaiters() async throws {
        let (_, port, task) = try await start(health: HealthState(), exposition: PrometheusExposition())
        defer { task.cancel() }
        let second = ObservabilityServer(host: "127.0.0.1", port: port, exposition: PrometheusExposition(),
                                         health: HealthState(), logger: Logger(label: "test.observability"))
        let secondRun = Task { try await second.run() }
        do {
            let got = try await second.boundPort()
            XCTFail("second bind on \(port) succeeded with \(got)")
        } catch {}
        do {
            try await secondRun.value
            XCTFail("run() returned although bind failed")
        } catch {}
    }
}

/// A continuous-clock instant that tests move by hand.
final class ManualInstant: Sendable {
    private let state = Locked(ContinuousClock.now)
    var now: ContinuousClock.Instant { state.withLock { $0 } }
    func advance(_ by: Duration) { state.withLock { $0 = $0.advanced(by: by) } }
}
