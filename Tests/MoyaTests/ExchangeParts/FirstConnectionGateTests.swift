import Foundation
import MoyaTestServer
import NIOCore
import NIOPosix
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Run only with `MOYA_TIMING_SUITES=1` (a plain `swift test` leaves it out), which CI sets in a step of its own: its bursts are timed, and beside 1,200
/// instrumented tests a burst to a refusing origin took 34 s against a 30 s bound.
@Suite(
    "FirstConnectionGate: a burst to a new origin waits for its first connection",
    .enabled(if: TimingSuites.runHere, Comment(rawValue: TimingSuites.skipReason)))
struct FirstConnectionGateTests {
    let loop = MultiThreadedEventLoopGroup.singleton.next()

    /// An origin of a client that does not exist (the gate only compares identities).
    static func origin(port: Int = 8080, client: ObjectIdentifier = ObjectIdentifier(FirstConnectionGateTests.self as Any.Type)) -> FirstConnectionGate.Origin {
        FirstConnectionGate.Origin(client: client, scheme: "http", host: "127.0.0.1", port: port)
    }

    /// Admits a request whose work records `name` in `ran`.
    func admit(
        _ gate: FirstConnectionGate, _ origin: FirstConnectionGate.Origin, _ name: String, into ran: Protected<[String]>
    ) -> FirstConnectionGate.Passage {
        gate.pass(origin, loop: loop) {
            { ran.withLock { $0.append(name) } }
        }
    }

    @Test("The first request opens; the next ones wait, go in order when it opened, and later ones go at once")
    func opensThenReleasesInOrder() {
        let gate = FirstConnectionGate(patience: .seconds(600))
        let ran = Protected<[String]>([])
        let origin = Self.origin()
        #expect(admit(gate, origin, "first", into: ran) == .opens)
        #expect(admit(gate, origin, "second", into: ran) == .waits)
        #expect(admit(gate, origin, "third", into: ran) == .waits)
        #expect(ran.current.isEmpty)

        gate.opened(origin)
        #expect(ran.current == ["second", "third"])
        #expect(admit(gate, origin, "fourth", into: ran) == .proceed)
        gate.opened(origin)
        #expect(ran.current == ["second", "third"])
    }

    @Test("Origins are apart: another port or another client opens on its own")
    func originsAreApart() {
        let gate = FirstConnectionGate(patience: .seconds(600))
        let ran = Protected<[String]>([])
        #expect(admit(gate, Self.origin(port: 1), "a", into: ran) == .opens)
        #expect(admit(gate, Self.origin(port: 2), "b", into: ran) == .opens)
        #expect(admit(gate, Self.origin(port: 1, client: ObjectIdentifier(Int.self as Any.Type)), "c", into: ran) == .opens)
        #expect(admit(gate, Self.origin(port: 1), "d", into: ran) == .waits)
        gate.opened(Self.origin(port: 2))
        #expect(ran.current.isEmpty)
        gate.opened(Self.origin(port: 1))
        #expect(ran.current == ["d"])
    }

    @Test("Waiting requests go after the patience even when the first never opens")
    func patienceReleases() async throws {
        let gate = FirstConnectionGate(patience: .milliseconds(50))
        let ran = Protected<[String]>([])
        let origin = Self.origin()
        #expect(admit(gate, origin, "first", into: ran) == .opens)
        // The waiting request's work tells when the gate let it go.
        let released = Signal()
        let second = gate.pass(origin, loop: loop) {
            {
                ran.withLock { $0.append("second") }
                released.fire()
            }
        }
        #expect(second == .waits)
        #expect(await released.wait(), "the patience let the waiting request go")
        #expect(ran.current == ["second"])
        #expect(admit(gate, origin, "third", into: ran) == .proceed)
    }

    @Test("Past its capacity the gate forgets the opened origins, never the ones still opening")
    func capacity() {
        let gate = FirstConnectionGate(patience: .seconds(600), capacity: 2)
        let ran = Protected<[String]>([])
        let opened = Self.origin(port: 1)
        let opening = Self.origin(port: 2)
        #expect(admit(gate, opened, "a", into: ran) == .opens)
        gate.opened(opened)
        #expect(admit(gate, opening, "b", into: ran) == .opens)
        #expect(admit(gate, opening, "waiting", into: ran) == .waits)
        // A third origin: the opened one is forgotten, the opening one and its waiter stay.
        #expect(admit(gate, Self.origin(port: 3), "c", into: ran) == .opens)
        #expect(admit(gate, opened, "again", into: ran) == .opens)
        #expect(ran.current.isEmpty)
        gate.opened(opening)
        #expect(ran.current == ["waiting"])
    }

    @Test("A session gates only when AsyncHTTPClient must learn the HTTP version first")
    func onlyWithAutomaticVersion() async throws {
        let automatic = Session(configuration: .init(httpVersion: .automatic))
        let http1 = Session(configuration: .init(httpVersion: .http1Only))
        #expect(automatic.parts.placement.firstConnectionGate != nil)
        #expect(http1.parts.placement.firstConnectionGate == nil)
        try await automatic.shutdown()
        try await http1.shutdown()
    }

    @Test("A burst to a new origin: every request arrives once, and every response is its own")
    func burstArrivesOnce() async throws {
        let server = try await TestServer.start()
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let count = 24
        let bodies = await withTaskGroup(of: (Int, String?).self) { group in
            for index in 0..<count {
                group.addTask {
                    let target = Remote(server.baseURL, "/echo", task: .requestParameters(parameters: ["i": index], encoding: URLEncoding.queryString))
                    let result = await send(provider, target)
                    return (index, result.response.flatMap { String(data: $0.data, encoding: .utf8) })
                }
            }
            var bodies: [Int: String?] = [:]
            for await (index, body) in group { bodies[index] = body }
            return bodies
        }
        for index in 0..<count {
            let body = try #require(bodies[index] ?? nil, "request \(index) failed")
            #expect(body.contains("i=\(index)"), "request \(index): \(body)")
        }
        #expect(server.receivedRequests.filter { $0.path == "/echo" }.count == count)
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A burst to an origin that refuses connections fails every request, at once")
    func burstToRefusingOrigin() async throws {
        let gone = try RefusingPort()
        defer { withExtendedLifetime(gone) {} }
        let url = gone.baseURL
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let start = Date()
        let codes = await withTaskGroup(of: URLError.Code?.self) { group in
            for _ in 0..<8 {
                group.addTask { (await send(provider, Remote(url, "/echo")).error?.underlyingError as? URLError)?.code }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(codes == Array(repeating: .cannotConnectToHost, count: 8))
        // A refused connection is refused at once; the waiting requests must not sit out the
        // gate's patience or a connect timeout (the bound is loose for a loaded machine).
        #expect(Date().timeIntervalSince(start) < 30)
        try await session.shutdown()
    }
}
