import Foundation
import GatewayKit
import Hummingbird
import Logging
import Moya
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing
import Tracing
import W3CTraceContext

/// The gateway in process, against the httpbin at `MOYA_HTTPBIN_URL` (CI starts one).
/// The httpbin the gateway calls; CI starts one.
let testHTTPBin = ProcessInfo.processInfo.environment["MOYA_HTTPBIN_URL"].flatMap(URL.init(string:))

@Suite("The gateway service", .enabled(if: testHTTPBin != nil, "needs MOYA_HTTPBIN_URL"))
struct GatewayTests {

    @Test("A caller's trace goes on to the upstream: its traceparent carries the trace, through the route's server span")
    func tracePropagation() async throws {
        let gateway = try await RunningGateway.start()
        defer { gateway.stop() }
        // The test is the gateway's caller: its request, made inside a span, carries that span's
        // trace (the client's session injects it), as a caller in another service would.
        let (response, caller) = try await withSpan("caller") { span in
            let trace = try #require(span.context.traceContext)
            return (try await gateway.client.request(.greeting), trace)
        }
        #expect(response.statusCode == 200)
        // httpbin echoes the headers it received.
        let echo = try response.map([String: String].self, atKeyPath: "headers")
        let upstreamParent = try #require(echo["Traceparent"], "the upstream saw no traceparent: \(echo)")
        let parts = upstreamParent.split(separator: "-").map(String.init)
        try #require(parts.count == 4)
        #expect(parts[1] == "\(caller.traceID)")
        #expect(parts[2] != "\(caller.spanID)")

        // The span the upstream saw as its parent (the gateway's client span) leads back,
        // through the route's server span, to the caller's span.
        let spans = try await SpanLog.shared.waitForChain(from: parts[2], to: "\(caller.spanID)", traceID: "\(caller.traceID)")
        #expect(spans.first?.kind == .client)
        #expect(spans.contains { $0.kind == .server })
    }

    @Test("/metrics shows Moya's client metrics for the upstream calls")
    func metrics() async throws {
        let gateway = try await RunningGateway.start()
        defer { gateway.stop() }
        _ = try await gateway.client.request(.greeting)
        let page = try await gateway.client.request(.metrics).mapString()
        let host = try #require(testHTTPBin?.host)
        let durations = page.split(separator: "\n").filter {
            $0.hasPrefix("http_client_request_duration") && $0.contains("server_address=\"\(host)\"")
        }
        #expect(!durations.isEmpty, "no client metrics in:\n\(page)")
    }

    @Test("A repeated greeting comes from the session's HTTP cache")
    func cache() async throws {
        let gateway = try await RunningGateway.start()
        defer { gateway.stop() }
        let first = try await gateway.client.request(.greeting)
        let second = try await gateway.client.request(.greeting)
        #expect(first.response?.value(forHTTPHeaderField: "X-Upstream-Cache") == "network")
        #expect(second.response?.value(forHTTPHeaderField: "X-Upstream-Cache") == "hit")
    }

    @Test("A graceful shutdown during a slow upstream call loses no response, then the service stops")
    func gracefulShutdown() async throws {
        let gateway = try await RunningGateway.start()
        defer { gateway.stop() }
        let client = gateway.client
        let slow = _Concurrency.Task { try await client.request(.slow(seconds: 2)) }
        // Wait until the upstream call is in flight: the session's active-requests gauge says so.
        let deadline = ContinuousClock.now + .seconds(10)
        while try await !gateway.upstreamCallInFlight() {
            #expect(ContinuousClock.now < deadline, "the slow call never reached the upstream")
            if ContinuousClock.now >= deadline { return }
            try await _Concurrency.Task.sleep(for: .milliseconds(20))
        }
        await gateway.group.triggerGracefulShutdown()
        let response = try await slow.value
        #expect(response.statusCode == 200)
        #expect(try response.mapString().contains("/delay/2"))
        // The group ends: the server has drained and the session has closed its connections.
        try await gateway.runTask.value
        // Nothing listens any more.
        await #expect(throws: MoyaError.self) {
            _ = try await client.request(.greeting)
        }
    }

    @Test("SIGTERM during a slow upstream call: the program ends when its shutdown limit runs out, not when the call would have")
    func shutdownLimit() async throws {
        // The program itself, stopped as an orchestrator stops it. Its limit is 2 s here (10 s by
        // default), well below the 10 s of the upstream call (httpbin's longest delay).
        let gateway = try await GatewayProcess.start(environment: ["SHUTDOWN_LIMIT": "2"])
        defer { gateway.stop() }
        let client = gateway.client
        let slow = _Concurrency.Task { try await client.request(.slow(seconds: 10)) }
        let deadline = ContinuousClock.now + .seconds(10)
        while try await !gateway.upstreamCallInFlight() {
            try #require(ContinuousClock.now < deadline, "the slow call never reached the upstream")
            try await _Concurrency.Task.sleep(for: .milliseconds(20))
        }
        let sigterm = ContinuousClock.now
        gateway.sendSIGTERM()
        let exit = try #require(await gateway.waitForExit())
        let took = exit.instant - sigterm
        // The 2 s limit, then the cancellation and the process's exit (tens of milliseconds on an
        // idle machine), with 5 s to spare: on two cores shared with other builds and test runs,
        // the group's timer, the cancelled requests and the exit each wait for a thread. Without
        // the limit the program waits for the upstream call: 9 s or more after SIGTERM here (its
        // 10 s, less the moments it took to see it in flight), so 7 s still tells them apart. (On
        // a machine so slow that it does not, the last check below still does.)
        #expect(took < .seconds(7), "SIGTERM to exit: \(took); the program's log:\n\(gateway.log)")
        // A clean exit: the cancelled work ended by itself (the group did not have to stop the
        // process after its maximumCancellationDuration).
        #expect(exit.status == 0, "exit status \(exit.status); the program's log:\n\(gateway.log)")
        // The slow call was cut short rather than answered.
        let answer = await slow.result
        #expect(throws: MoyaError.self, "the slow call was answered: the shutdown waited for it") { try answer.get() }
    }

    private func randomHex(bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}

/// CI sets `MOYA_REQUIRE_HTTPBIN`: the suite above must run there, not be skipped.
@Test("httpbin is there when CI says it is")
func httpbinRequired() {
    #expect(testHTTPBin != nil || ProcessInfo.processInfo.environment["MOYA_REQUIRE_HTTPBIN"] == nil)
}
