import Foundation
import NIOCore
import NIOPosix

/// An HTTP server in the test process, on loopback, that answers what a test scripts and records
/// what it receives.
///
/// Start one with ``start(_:)`` (or let the ``Testing/Trait/mockServer(_:setup:)`` trait start one for
/// each test), point a provider's `baseURL` at ``baseURL``, script its answers with
/// ``enqueue(_:)`` or ``route(_:respond:)``, then check what arrived with ``requests``,
/// ``waitForRequests(count:timeout:)`` or ``expectRequest(_:_:query:headers:body:count:sourceLocation:)``.
///
/// ```swift
/// let server = try await MockServer.start()
/// server.enqueue(.json(#"{"id": 1, "name": "Ann"}"#, status: 201))
/// let provider = MoyaProvider<UserAPI>()
/// let response = try await provider.request(.create(NewUser(name: "Ann"), baseURL: server.baseURL))
/// #expect(response.statusCode == 201)
/// server.expectRequest("POST", "/users", body: .json(#"{"name": "Ann"}"#))
/// await server.shutdown()
/// ```
///
/// Starting and stopping never block a thread: both are `async`, and all servers of a process
/// share one small event loop group, so a server per test costs a listening socket, not a
/// thread. A server nobody shut down closes its socket and connections when it is released.
///
/// Each request is answered by the latest ``route(_:respond:)`` whose method and path match;
/// failing that by the next response of the queue (``enqueue(_:)``); failing that by the
/// ``defaultResponse``, or a `404` whose body says that nothing was scripted (such requests are
/// also listed in ``unansweredRequests``).
public final class MockServer: Sendable {
    /// The settings the server was started with.
    public let configuration: Configuration

    /// The TCP port the server listens on.
    public let port: Int

    /// The address the server listens on (``Configuration/host``).
    public var host: String { self.configuration.host }

    /// `http://<host>:<port>`, or `https://` when the server speaks TLS.
    public var baseURL: URL {
        let scheme = self.configuration.tls == nil ? "http" : "https"
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return URL(string: "\(scheme)://\(host):\(self.port)")!
    }

    /// How many connections the server has accepted so far (a TLS connection counts even when
    /// its handshake fails).
    public var acceptedConnections: Int { self.listener.acceptedConnections }

    /// How many of the accepted connections are still open: it drops when a client closes one
    /// (a cancelled request, say), and is `0` once the server has shut down.
    public var openConnections: Int { self.listener.openConnections }

    let listener: MockServerListener
    let script: ResponseScript
    let journal: RequestJournal<MockRequest>

    private init(configuration: Configuration, port: Int, listener: MockServerListener, script: ResponseScript, journal: RequestJournal<MockRequest>) {
        self.configuration = configuration
        self.port = port
        self.listener = listener
        self.script = script
        self.journal = journal
    }

    /// Starts a server and returns once it listens.
    ///
    /// - Parameter configuration: Where it listens, whether it speaks TLS and HTTP/2, and how
    ///   much of each request body it keeps.
    /// - Throws: ``MockServerError/invalidConfiguration(_:)`` for a certificate or key that does
    ///   not parse, or the system's error when the address cannot be bound.
    public static func start(_ configuration: Configuration = Configuration()) async throws -> MockServer {
        try await self.start(configuration, connections: .mock)
    }

    /// Starts a server whose connections are set up as `connections` says: the project's own
    /// test server puts its fixed routes behind the mock handler, or replaces HTTP altogether.
    /// `eventLoopGroup`, when given, serves the server instead of the kit's shared loops (the
    /// caller keeps it running), so that routes that work hard on their event loop (hashing a
    /// large upload) never hold up the kit's other servers.
    package static func start(
        _ configuration: Configuration,
        connections: ConnectionSetup,
        eventLoopGroup: (any EventLoopGroup)? = nil
    ) async throws -> MockServer {
        let script = ResponseScript()
        let journal = RequestJournal<MockRequest>()
        let (listener, port) = try await MockServerListener.bind(
            configuration: configuration,
            connections: connections,
            eventLoopGroup: eventLoopGroup ?? MockServerListener.eventLoopGroup,
            script: script,
            journal: journal
        )
        return MockServer(configuration: configuration, port: port, listener: listener, script: script, journal: journal)
    }

    /// Stops the server: closes the listening socket and every open connection, and returns
    /// once they are closed. Requests in flight fail on the client's side as a closed
    /// connection. Calling it again does nothing.
    public func shutdown() async {
        await self.listener.close()
    }

    deinit {
        self.listener.closeWithoutWaiting()
    }
}

extension MockServer {
    /// Every request answered so far, in arrival order (a request counts once its body has
    /// fully arrived).
    public var requests: [MockRequest] {
        self.journal.requests
    }

    /// The requests that no route, queued response or default response answered; each got a
    /// `404` saying so.
    public var unansweredRequests: [MockRequest] {
        self.journal.unanswered
    }

    /// Waits until `count` requests have arrived, and returns the first `count` of them.
    ///
    /// Returns at once when they already have. This replaces sleeping in a test that must know
    /// that a request reached the server: for example, that a retry happened.
    ///
    /// - Parameters:
    ///   - count:   How many requests to wait for (the first is 1).
    ///   - timeout: How long to wait before failing; a hung client fails the test instead of
    ///              hanging it.
    /// - Throws: ``MockServerError/timedOut(waitingFor:received:after:)`` when fewer arrived in
    ///   time, or `CancellationError` when the waiting task is cancelled.
    @discardableResult
    public func waitForRequests(count: Int, timeout: Duration = .seconds(60)) async throws -> [MockRequest] {
        try await self.journal.wait(for: count, timeout: timeout)
    }

    /// Forgets the requests recorded so far; the next one to arrive is number 1 again.
    public func resetRequests() {
        self.journal.reset()
    }
}
