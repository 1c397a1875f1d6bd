import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP transport of a provider: one connection pool and its configuration.
///
/// `MoyaProvider()` uses ``Session/default``, a shared session that lives as long as the process
/// and needs no shutdown. A session you create owns its connections: call ``shutdown()`` (or
/// ``syncShutdown()`` outside async code) when you are done with it; a session released without
/// a shutdown closes its connections in the background.
///
/// ```swift
/// let session = Session(configuration: .init(timeoutIntervalForRequest: 15))
/// let provider = MoyaProvider<GitHub>(session: session)
/// // ...
/// try await session.shutdown()
/// ```
public final class Session: Sendable {
    /// The shared session used by providers created without one. It cannot be shut down.
    public static let `default` = Session(configuration: .default, isShared: true)

    /// The configuration this session was created with.
    public let configuration: Configuration

    let client: HTTPClient
    private let isShared: Bool
    private let isShutDown = Protected(false)

    /// Creates a session with its own connection pool.
    ///
    /// - Parameter configuration: Timeouts, redirects, decompression, default headers and pool.
    public convenience init(configuration: Configuration = .default) {
        self.init(configuration: configuration, isShared: false)
    }

    private init(configuration: Configuration, isShared: Bool) {
        self.configuration = configuration
        self.isShared = isShared
        self.client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: Session.clientConfiguration(for: configuration)
        )
    }

    deinit {
        // A session the user forgot to shut down still closes its connections; the client keeps
        // itself alive until that finishes. The shared session is never released.
        if !isShared, !isShutDown.current {
            client.shutdown().whenComplete { _ in }
        }
    }

    /// Always `false`: requests start when the provider sends them. Kept for Moya compatibility.
    public var startRequestsImmediately: Bool { false }

    /// Closes every connection of this session; requests still running fail.
    ///
    /// Calling it more than once, or on the shared ``default`` session, does nothing.
    public func shutdown() async throws {
        guard markShutDown() else { return }
        try await client.shutdown()
    }

    /// Closes every connection of this session, blocking until done. Prefer ``shutdown()`` in
    /// async code.
    @available(*, noasync, message: "syncShutdown() blocks; use shutdown() in async code")
    public func syncShutdown() throws {
        guard markShutDown() else { return }
        try client.syncShutdown()
    }

    private func markShutDown() -> Bool {
        guard !isShared else { return false }
        return isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return !isShutDown
        }
    }

    // MARK: - Sending

    /// Sends `request` and reports progress and the result. Session headers are added unless the
    /// request sets the same header. A 401 with a Basic challenge is answered once with the
    /// request's credential, if it has one.
    func send(
        _ request: TransportRequest,
        progress: TransportProgressHandler?,
        completion: @escaping TransportCompletionHandler
    ) -> TransportHandle {
        let exchange = TransportExchange(session: self, request: request, progress: progress, completion: completion)
        exchange.start()
        return TransportHandle(cancel: exchange.cancel)
    }

    /// Builds the AsyncHTTPClient request for `urlRequest`.
    ///
    /// - Parameters:
    ///   - urlRequest:    The request.
    ///   - authorization: An `Authorization` value that replaces the request's.
    ///   - body:          A streamed body that replaces `urlRequest.httpBody`.
    func makeClientRequest(_ urlRequest: URLRequest, authorization: String?, body streamedBody: HTTPClient.Body? = nil) throws -> HTTPClient.Request {
        guard let url = urlRequest.url else {
            throw URLError(.badURL)
        }
        var headers = HTTPHeaders()
        let requestHeaders = urlRequest.allHTTPHeaderFields ?? [:]
        let overridden = Set(requestHeaders.keys.map { $0.lowercased() })
        for (name, value) in configuration.headers where !overridden.contains(name.lowercased()) {
            headers.add(name: name, value: value)
        }
        for (name, value) in requestHeaders {
            headers.add(name: name, value: value)
        }
        if let authorization = authorization {
            headers.replaceOrAdd(name: "Authorization", value: authorization)
        }
        let method = HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET")
        let body = streamedBody ?? urlRequest.httpBody.map { HTTPClient.Body.bytes($0) }
        return try HTTPClient.Request(url: url, method: method, headers: headers, body: body)
    }

    var deadline: NIODeadline? {
        configuration.timeoutIntervalForResource.map { .now() + .nanoseconds(Int64($0 * 1_000_000_000)) }
    }

    private static func clientConfiguration(for configuration: Configuration) -> HTTPClient.Configuration {
        let redirect: HTTPClient.Configuration.RedirectConfiguration
        switch configuration.redirectPolicy {
        case let .follow(max, allowCycles): redirect = .follow(max: max, allowCycles: allowCycles)
        case .disallow: redirect = .disallow
        }
        let decompression: HTTPClient.Decompression
        switch configuration.decompression {
        case .disabled: decompression = .disabled
        case .enabled(let ratio): decompression = .enabled(limit: .ratio(ratio))
        }
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: redirect,
            timeout: .init(
                connect: timeAmount(configuration.timeoutIntervalForConnect),
                read: timeAmount(configuration.timeoutIntervalForRequest)
            ),
            connectionPool: .init(
                idleTimeout: timeAmount(configuration.connectionIdleTimeout),
                concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maximumConnectionsPerHost
            ),
            decompression: decompression
        )
        clientConfiguration.httpVersion = .automatic
        return clientConfiguration
    }

    private static func timeAmount(_ interval: TimeInterval) -> TimeAmount {
        .nanoseconds(Int64(max(0, interval) * 1_000_000_000))
    }
}
