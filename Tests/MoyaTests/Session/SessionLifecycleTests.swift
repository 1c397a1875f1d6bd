import Foundation
import Logging
import MoyaTestServer
import ServiceLifecycle
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A logger that says nothing, for the service groups of these tests.
private let quietLogger = Logger(label: "moya.tests.lifecycle", factory: { _ in SwiftLogNoOpLogHandler() })

/// Whether `result` failed with `expected`, Moya's way: `MoyaError.underlying` without a response.
private func failed(_ result: Result<Moya.Response, MoyaError>, with expected: SessionError) -> Bool {
    guard case .underlying(let error, nil)? = result.error else { return false }
    return error as? SessionError == expected
}

/// A route of the test server that answers only when the test lets it: `arrived` fires when a
/// request has reached it, and it answers `slow done` once `release` fires.
private struct HeldRoute {
    let arrived = Signal()
    let release = Signal()

    init(_ server: TestServer, path: String) {
        let arrived = self.arrived
        let release = self.release
        server.mock.route(path) { _ in
            arrived.fire()
            await release.wait()
            return .text("slow done")
        }
    }
}

/// Counts the outcomes plugins hear of.
private final class OutcomeCounter: PluginType, @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var _count = 0
    var count: Int { lock.withLock { _count } }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        lock.withLock { _count += 1 }
    }
}

/// A session with a shutdown grace period in a `ServiceGroup` that runs, and a provider on it.
private struct GroupedSession {
    let session: Session
    let provider: MoyaProvider<Remote>
    let group: ServiceGroup
    let run: _Concurrency.Task<Void, any Error>

    init(gracePeriod: TimeInterval, plugins: [PluginType] = []) {
        let session = Session(configuration: .init(shutdownGracePeriod: gracePeriod))
        let group = ServiceGroup(services: [session], logger: quietLogger)
        self.session = session
        self.provider = MoyaProvider<Remote>(session: session, plugins: plugins)
        self.group = group
        self.run = _Concurrency.Task { try await group.run() }
    }

    /// Triggers a graceful shutdown, and expects the session to be draining, not stopped: a
    /// request of the test still runs.
    func startDraining(sourceLocation: SourceLocation = #_sourceLocation) async {
        await group.triggerGracefulShutdown()
        #expect(await eventually { session.parts.inFlight.lifecycle.phase >= .draining }, sourceLocation: sourceLocation)
        #expect(session.parts.inFlight.lifecycle.phase == .draining, sourceLocation: sourceLocation)
    }
}

@Suite("Session lifecycle: a session in a ServiceGroup drains its requests on a graceful shutdown, then shuts down")
struct SessionLifecycleTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test("On a graceful shutdown a running request finishes, a new one is refused at once, and run() returns with the session shut down")
    func gracefulShutdown() async throws {
        let held = HeldRoute(server, path: "/slow")
        defer { held.release.fire() }
        let grouped = GroupedSession(gracePeriod: 120)
        let (session, provider) = (grouped.session, grouped.provider)

        let running = _Concurrency.Task { await send(provider, Remote(base, "/slow")) }
        #expect(await held.arrived.wait())
        #expect(session.parts.inFlight.lifecycle.inFlight == 1)

        await grouped.startDraining()

        // Refused before it is sent: the fixed routes never see it, and it fails while the
        // running request still waits for its answer.
        let refused = await send(provider, Remote(base, "/echo"))
        #expect(failed(refused, with: .shuttingDown))
        #expect(refused.error?.localizedDescription.contains("shutting down") == true)
        #expect(server.receivedRequests.isEmpty)
        #expect(!held.release.hasFired)
        #expect(session.parts.inFlight.lifecycle.phase == .draining)

        held.release.fire()
        let finished = await running.value
        #expect(finished.response?.statusCode == 200)
        #expect(finished.response.map { String(decoding: $0.data, as: UTF8.self) } == "slow done")

        try await grouped.run.value
        #expect(session.parts.inFlight.lifecycle.phase == .stopped)
        #expect(session.parts.inFlight.lifecycle.inFlight == 0)
        #expect(session.parts.inFlight.isShutDown)
        // The client is shut down already: it refuses a second shutdown.
        await #expect(throws: (any Error).self) { try await session.parts.routes.client.shutdown() }
        // Later requests fail as on a session that was shut down.
        #expect(failed(await send(provider, Remote(base, "/echo")), with: .shutDown))
    }

    @Test("The async API and streams are refused the same way during the grace period")
    func asyncAndStreamRefused() async throws {
        let held = HeldRoute(server, path: "/slow")
        defer { held.release.fire() }
        let grouped = GroupedSession(gracePeriod: 120)
        let provider = grouped.provider
        let running = _Concurrency.Task { try await provider.request(Remote(base, "/slow")) }
        #expect(await held.arrived.wait())
        await grouped.startDraining()

        do {
            _ = try await provider.request(Remote(base, "/echo"))
            Issue.record("expected the request to be refused")
        } catch {
            #expect(failed(.failure(error), with: .shuttingDown))
        }
        do {
            _ = try await provider.stream(Remote(base, "/bytes/10"))
            Issue.record("expected the stream to be refused")
        } catch {
            #expect(failed(.failure(error), with: .shuttingDown))
        }
        #expect(server.receivedRequests.isEmpty)

        held.release.fire()
        #expect(try await running.value.statusCode == 200)
        try await grouped.run.value
    }

    @Test("A session with nothing running shuts down at once, however long its grace period")
    func idleSessionStopsAtOnce() async throws {
        let session = Session(configuration: .init(shutdownGracePeriod: 3600))
        let provider = MoyaProvider<Remote>(session: session)
        #expect(try await provider.request(Remote(base, "/bytes/3")).data.count == 3)
        let group = ServiceGroup(services: [session], logger: quietLogger)
        let run = _Concurrency.Task { try await group.run() }
        await group.triggerGracefulShutdown()
        let started = ContinuousClock.now
        try await run.value
        // Far below the grace period: nothing was waited for.
        #expect(ContinuousClock.now - started < .seconds(600))
        #expect(session.parts.inFlight.isShutDown)
    }

    @Test("A request still running when the grace period ends fails once, with stoppedByShutdown")
    func gracePeriodExpires() async throws {
        let held = HeldRoute(server, path: "/slow")
        defer { held.release.fire() }
        let counter = OutcomeCounter()
        let grouped = GroupedSession(gracePeriod: 0.3, plugins: [counter])
        let session = grouped.session

        let outcomes = Recorder<UncheckedResult>()
        let ended = Signal()
        grouped.provider.request(Remote(base, "/slow"), callbackQueue: .global()) { result in
            outcomes.append(UncheckedResult(result))
            ended.fire()
        }
        #expect(await held.arrived.wait())

        let started = ContinuousClock.now
        await grouped.group.triggerGracefulShutdown()
        try await grouped.run.value
        // The grace period is 0.3 s; the bound only says that run() did not wait for the
        // server, which never answers on its own.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(await ended.wait())
        #expect(outcomes.values.count == 1)
        let result = try #require(outcomes.values.first).result
        #expect(failed(result, with: .stoppedByShutdown))
        #expect(result.error?.localizedDescription.contains("shutdownGracePeriod") == true)
        #expect(counter.count == 1)
        #expect(session.parts.inFlight.isShutDown)
        #expect(session.parts.inFlight.lifecycle.inFlight == 0)
    }

    @Test("A stream still running when the grace period ends fails with stoppedByShutdown")
    func streamStoppedAtGracePeriodEnd() async throws {
        let grouped = GroupedSession(gracePeriod: 0.3)
        // Its head arrives, its body never does.
        let stream = try await grouped.provider.stream(Remote(base, "/headers-only-then-hang"))
        #expect(grouped.session.parts.inFlight.lifecycle.inFlight == 1)
        await grouped.group.triggerGracefulShutdown()
        try await grouped.run.value
        do {
            for try await _ in stream.body {}
            Issue.record("expected the stream to fail")
        } catch {
            #expect(failed(.failure(error), with: .stoppedByShutdown))
        }
    }

    @Test(
        "Cancelling the group stops running requests and shuts the session down at once, also during the grace period",
        arguments: [false, true])
    func cancellation(duringGracePeriod: Bool) async throws {
        let held = HeldRoute(server, path: "/slow")
        defer { held.release.fire() }
        let grouped = GroupedSession(gracePeriod: 3600)
        let (session, provider) = (grouped.session, grouped.provider)
        let running = _Concurrency.Task { await send(provider, Remote(base, "/slow")) }
        #expect(await held.arrived.wait())
        if duringGracePeriod {
            // The group is then cancelled while the session waits for its request: it stops waiting.
            await grouped.startDraining()
        }

        grouped.run.cancel()
        // A cancelled group may end with an error of its own; the session's part is what counts.
        _ = try? await grouped.run.value
        #expect(failed(await running.value, with: .stoppedByShutdown))
        #expect(session.parts.inFlight.isShutDown)
        #expect(session.parts.inFlight.lifecycle.phase == .stopped)
    }

    @Test("A session run outside a group waits until its task is cancelled, then shuts down")
    func runWithoutGroup() async throws {
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let run = _Concurrency.Task { try await session.run() }
        #expect(try await provider.request(Remote(base, "/bytes/4")).data.count == 4)
        #expect(session.parts.inFlight.lifecycle.phase == .open)
        run.cancel()
        try await run.value
        #expect(session.parts.inFlight.isShutDown)
        #expect(failed(await send(provider, Remote(base, "/echo")), with: .shutDown))
    }

    @Test("The shared session's run() returns on a graceful shutdown, and the session goes on working")
    func sharedSession() async throws {
        let group = ServiceGroup(services: [Session.default], logger: quietLogger)
        let run = _Concurrency.Task { try await group.run() }
        await group.triggerGracefulShutdown()
        try await run.value
        let provider = MoyaProvider<Remote>()
        #expect(try await provider.request(Remote(base, "/bytes/2")).data.count == 2)
        #expect(Session.default.parts.inFlight.lifecycle.phase == .open)
    }

    @Test("shutdown() called directly fails a running request with stoppedByShutdown")
    func directShutdown() async throws {
        let held = HeldRoute(server, path: "/slow")
        defer { held.release.fire() }
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let running = _Concurrency.Task { await send(provider, Remote(base, "/slow")) }
        #expect(await held.arrived.wait())
        try await session.shutdown()
        #expect(failed(await running.value, with: .stoppedByShutdown))
        #expect(failed(await send(provider, Remote(base, "/echo")), with: .shutDown))
    }

    @Test("The counter admits until closed, refuses after, and wakes the waiter when the last exchange ends")
    func counter() async {
        let lifecycle = SessionLifecycle()
        #expect(lifecycle.enter() == nil)
        #expect(lifecycle.enter() == nil)
        #expect(lifecycle.inFlight == 2)
        lifecycle.ended()
        #expect(lifecycle.inFlight == 1)

        lifecycle.close(.draining)
        #expect(lifecycle.enter() as? SessionError == .shuttingDown)
        #expect(lifecycle.inFlight == 1)
        // Something is still in flight: no grace at all means not drained.
        #expect(await lifecycle.waitUntilDrained(gracePeriod: 0) == false)

        let waiter = _Concurrency.Task { await lifecycle.waitUntilDrained(gracePeriod: 3600) }
        lifecycle.ended()
        #expect(await waiter.value)
        #expect(lifecycle.inFlight == 0)
        // A phase never goes back.
        lifecycle.close(.stopped)
        lifecycle.close(.draining)
        #expect(lifecycle.phase == .stopped)
        #expect(lifecycle.enter() as? SessionError == .shutDown)
    }

    @Test("A session closed with nothing in flight is drained at once")
    func closedIdle() async {
        let lifecycle = SessionLifecycle()
        lifecycle.close(.draining)
        #expect(await lifecycle.waitUntilDrained(gracePeriod: 3600))
    }
}
