import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkConditionTests {
    /// Every event of `events`, with when it arrived (from `start`).
    func collect(_ events: ServerSentEventStream, from start: ContinuousClock.Instant = .now) async throws -> [(
        event: ServerSentEvent, at: Duration
    )] {
        var all: [(event: ServerSentEvent, at: Duration)] = []
        for try await event in events {
            all.append((event, ContinuousClock.now - start))
        }
        return all
    }

    /// The `Last-Event-ID` of each request the event server received with `key`, in order.
    func lastEventIDs(_ provider: MoyaProvider<NetemTarget>, key: String) async throws -> [String?] {
        let response = try await provider.request(.events("/sse/log/\(key)"))
        return try JSONDecoder().decode([String?].self, from: response.data)
    }

    @Test(
        "Server-Sent Events under delay and loss: every event arrives once, in order, across reconnections with Last-Event-ID",
        .enabled(Netem.noEventsMessage, { Netem.hasEvents }),
        arguments: [["delay", "100ms", "25ms"], ["loss", "10%"]])
    func eventsUnderConditions(_ condition: [String]) async throws {
        try Netem.run(["set"] + condition)
        defer { try? Netem.run("clear") }
        let session = try Netem.session(timeout: 10)
        let provider = MoyaProvider<NetemTarget>(session: session)
        var options = StreamOptions()
        // Far above the gaps between events: under delay it must never fire.
        options.idleTimeout = 5
        let policy = ReconnectionPolicy(initialDelay: 0.1, maximumDelay: 1, maximumAttempts: 3)
        let numbers = (1...6).map(String.init)

        // Three events a connection, then the server ends the response: the client reconnects
        // with the last ID until the server answers 204.
        let countKey = UUID().uuidString
        let counted = try await collect(
            provider.events(try .events("/sse/count/6", query: ["key": countKey, "retry_ms": "100"]), reconnection: policy, options: options))
        #expect(counted.map(\.event.data) == numbers)
        #expect(counted.map(\.event.id) == numbers)
        // Each request carries the last ID received before it: [nil, "3", "6"] on a link that
        // loses nothing. Under loss a connection may fail and be made again (the idle timeout, a
        // reset), which adds a request with the ID received by then; never an earlier one.
        let logged = try await lastEventIDs(provider, key: countKey)
        #expect(logged.first == .some(nil) && logged.contains("3") && logged.last == "6", "\(logged)")
        let loggedNumbers = logged.compactMap { $0.flatMap { Int($0) } }
        #expect(loggedNumbers == loggedNumbers.sorted(), "\(logged)")
        if condition.first == "delay" {
            #expect(logged == [nil, "3", "6"], "a reconnection on a link that was only slow")
        }

        // One connection, an event every 200 ms.
        let ticksKey = UUID().uuidString
        let ticks = try await collect(
            provider.events(try .events("/sse/ticks/6", query: ["key": ticksKey, "interval_ms": "200"]), reconnection: policy, options: options))
        #expect(ticks.map(\.event.data) == numbers)
        let sent = try await lastEventIDs(provider, key: ticksKey)
        #expect(sent.first == .some(nil) && sent.last == "6", "\(sent)")
        if condition.first == "delay" {
            // A slow link is not a silent one: the idle timeout never fired.
            #expect(sent == [nil, "6"], "the stream was reconnected on a link that was only slow")
        }
        try await session.shutdown()
    }

    @Test(
        "Server-Sent Events over a link that goes down for 3 s: the idle timeout fires, and once the link is back the stream resumes after the last event",
        .enabled(Netem.noEventsMessage, { Netem.hasEvents }))
    func eventsLinkDown() async throws {
        try Netem.run("clear")
        defer { try? Netem.run("reset") }
        let session = try Netem.session(timeout: 2)
        let provider = MoyaProvider<NetemTarget>(session: session)
        var options = StreamOptions()
        options.idleTimeout = 1.5
        // While the link is down every reconnection fails (its connect timeout): try again every
        // half second until it is back.
        let policy = ReconnectionPolicy(initialDelay: 0.5, maximumDelay: 0.5, multiplier: 1, maximumAttempts: 20, respectsServerRetry: false)
        let key = UUID().uuidString
        let start = ContinuousClock.now
        let linkBack = Recorder<ContinuousClock.Instant>()
        var outage: _Concurrency.Task<Void, any Error>?
        var arrivals: [(event: ServerSentEvent, at: Duration)] = []
        let events = provider.events(try .events("/sse/ticks/12", query: ["key": key, "interval_ms": "200"]), reconnection: policy, options: options)
        for try await event in events {
            arrivals.append((event, ContinuousClock.now - start))
            if event.id == "4", outage == nil {
                outage = _Concurrency.Task {
                    try Netem.run("down")
                    try await _Concurrency.Task.sleep(for: .seconds(3))
                    // Taken before the link comes up: an event can reach the client before
                    // this task runs again after `up`, never before `up` starts.
                    linkBack.append(.now)
                    try Netem.run("up")
                }
            }
        }
        let elapsed = ContinuousClock.now - start
        try await outage?.value
        let back = try #require(linkBack.values.first) - start

        #expect(arrivals.map(\.event.data) == (1...12).map(String.init), "every event, once, in order")
        let sent = try await lastEventIDs(provider, key: key)
        #expect(sent.first == .some(nil) && sent.last == "12", "\(sent)")
        let gaps = arrivals.indices.dropFirst().map { ($0, arrivals[$0].at - arrivals[$0 - 1].at) }
        let (resumed, gap) = try #require(gaps.max { $0.1 < $1.1 })
        let checkOutage = {
            // The stream stalled while the link was down: the longest silence, and what came
            // after.
            #expect(gap >= .seconds(2), "the outage (3 s) shows as a silence")
            #expect(arrivals[resumed].at >= back, "the events after the silence came once the link was back")
            // The idle timeout ended the silent connection (without it the same connection would
            // have gone on once the link was back, and the server would have seen one request):
            // the next request to reach the server resumed after the last event received.
            // (Normally [nil, lastReceived, "12"]; a CI machine pausing the process for over
            // 1.5 s could add a reconnection, which is not what this test is about.)
            let lastReceived = arrivals[resumed - 1].event.id
            #expect(sent.dropFirst().contains(lastReceived), "no request resumed after event \(lastReceived ?? "?"): \(sent)")
            #expect(elapsed < .seconds(12 * 0.2 + 3) + Netem.margin)
        }
        // Event 4 leaves the server at about 0.8 s, and the outage starts when the client reads
        // it. A client starved for over a second (a sanitizer run on two busy cores) reads it
        // once the server has sent the rest too, and the outage then has nothing to stall.
        let outageStarted = arrivals.first { $0.event.id == "4" }?.at ?? .zero
        if outageStarted > .seconds(2) {
            withKnownIssue("the client read event 4 at \(outageStarted), after the server had sent the stream", isIntermittent: true) {
                checkOutage()
            }
        } else {
            checkOutage()
        }
        try await session.shutdown()
    }
}
