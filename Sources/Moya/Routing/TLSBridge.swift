import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Carries requests to hosts pinned by public key (``PublicKeysTrustEvaluator``).
///
/// AsyncHTTPClient builds its TLS handlers itself and offers no hook into the verification, so
/// for such a host the ``Session`` sends the request over plain HTTP/1.1 to a Unix-domain socket
/// of this bridge. For every connection AsyncHTTPClient opens there, the bridge opens one TLS
/// connection to the real server (with the session's ``TLSSettings``), waits for the handshake,
/// compares the server's key with the pins, and only then starts reading the request and
/// passing bytes both ways (``TLSBridgeConnector``). A server that fails any check receives
/// nothing: the bridge records why (``failure(for:after:)``) and closes the local connection.
///
/// It also carries plain-`http` requests to an HTTP proxy (``ForwardProxy``), which it sends on
/// in absolute form (``ProxyForwarder``).
///
/// There is one listener per host and port (and per proxy), in a private (0700) temporary
/// directory, both made on first use. ``shutdown()`` closes the listeners and every bridged connection and removes
/// the directory.
final class TLSBridge: Sendable {
    /// A pinned server and how its connections are verified.
    struct Upstream: Sendable {
        /// The host name or IP address (without brackets).
        let host: String
        let port: Int
        /// The session's TLS setup with the evaluator's host check.
        let tls: TLSConfiguration
        /// The pinned SPKI SHA-256 digests.
        let pins: Set<Data>
        /// Whether NIOSSL checks the chain against the trust roots.
        let performDefaultValidation: Bool

        var key: String { "\(host.lowercased()):\(port)" }

        /// The `Host` header for a request to this server.
        var hostHeader: String {
            TLSBridge.hostHeader(host: host, port: port, defaultPort: 443)
        }
    }

    /// The `Host` header for a server: its name (an IPv6 address in brackets), and its port
    /// unless it is `defaultPort`.
    static func hostHeader(host: String, port: Int, defaultPort: Int) -> String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? name : "\(name):\(port)"
    }

    private struct Listener {
        let path: String
        let channel: EventLoopFuture<any Channel>
    }

    private struct State {
        var directory: String?
        var listeners: [String: Listener] = [:]
        /// Every open bridged connection, local and upstream, to be closed at shutdown.
        var connections: [ObjectIdentifier: any Channel] = [:]
        /// Per upstream key: how many connections failed, and the last failure.
        var failures: [String: (count: Int, error: any Error)] = [:]
        var isShutDown = false
    }

    private let state = Protected(State())
    let connectTimeout: TimeAmount
    private let group: any EventLoopGroup

    init(group: any EventLoopGroup, connectTimeout: TimeAmount) {
        self.group = group
        self.connectTimeout = connectTimeout
    }

    /// The socket path of the listener for `upstream`, made on first use.
    func socketPath(for upstream: Upstream) -> EventLoopFuture<String> {
        if let existing = state.withLock({ $0.listeners[upstream.key] }) {
            return existing.channel.map { _ in existing.path }
        }
        // Outside the lock: building a context may read the system's trust store.
        let context: NIOSSLContext
        do {
            context = try TLSBridge.sslContext(for: upstream)
        } catch {
            return group.next().makeFailedFuture(error)
        }
        return socketPath(forKey: upstream.key) { bridge, channel in
            try channel.pipeline.syncOperations.addHandler(TLSBridgeConnector(bridge: bridge, upstream: upstream, sslContext: context))
        }
    }

    /// The socket path of the listener that forwards requests to `proxy`, made on first use.
    func socketPath(for proxy: ForwardProxy) -> EventLoopFuture<String> {
        socketPath(forKey: proxy.key) { bridge, channel in
            try ProxyForwarder.configure(channel, bridge: bridge, proxy: proxy)
        }
    }

    /// The socket path of the listener for `key`, made on first use with `configure` setting up
    /// each connection it accepts.
    private func socketPath(forKey key: String, configure: @escaping @Sendable (TLSBridge, any Channel) throws -> Void) -> EventLoopFuture<String> {
        let eventLoop = group.next()
        let result = state.withLock { state -> Result<Listener, any Error> in
            if state.isShutDown { return .failure(HTTPClientError.alreadyShutdown) }
            if let listener = state.listeners[key] { return .success(listener) }
            do {
                let directory = try state.directory ?? TLSBridge.makePrivateDirectory()
                state.directory = directory
                let path = "\(directory)/\(state.listeners.count).sock"
                let listener = Listener(path: path, channel: bind(path: path, on: eventLoop, configure: configure))
                state.listeners[key] = listener
                return .success(listener)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .failure(let error):
            return eventLoop.makeFailedFuture(error)
        case .success(let listener):
            return listener.channel.map { _ in listener.path }
        }
    }

    /// How many connections to `upstream` have failed so far.
    func failureCount(for upstream: Upstream) -> Int {
        failureCount(forKey: upstream.key)
    }

    /// How many connections to `proxy` have failed so far.
    func failureCount(for proxy: ForwardProxy) -> Int {
        failureCount(forKey: proxy.key)
    }

    /// Why a connection to `upstream` failed, when one failed after `count` were counted.
    func failure(for upstream: Upstream, after count: Int) -> (any Error)? {
        failure(forKey: upstream.key, after: count)
    }

    /// Why a connection to `proxy` failed, when one failed after `count` were counted.
    func failure(for proxy: ForwardProxy, after count: Int) -> (any Error)? {
        failure(forKey: proxy.key, after: count)
    }

    /// Records why a connection to `upstream` failed (a rejected key or certificate).
    func recordFailure(_ error: any Error, for upstream: Upstream) {
        recordFailure(TLSBridge.describe(error, upstream: upstream), forKey: upstream.key)
    }

    /// Records that a connection to `proxy` could not be opened.
    func recordFailure(_ error: any Error, for proxy: ForwardProxy) {
        recordFailure(error, forKey: proxy.key)
    }

    private func failureCount(forKey key: String) -> Int {
        state.withLock { $0.failures[key]?.count ?? 0 }
    }

    private func failure(forKey key: String, after count: Int) -> (any Error)? {
        state.withLock { state in
            guard let failure = state.failures[key], failure.count > count else { return nil }
            return failure.error
        }
    }

    private func recordFailure(_ error: any Error, forKey key: String) {
        state.withLock { state in
            let count = state.failures[key]?.count ?? 0
            state.failures[key] = (count + 1, error)
        }
    }

    /// Tracks `channel` until it closes; a channel opened after shutdown is closed at once.
    func register(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let isShutDown = state.withLock { state in
            if !state.isShutDown { state.connections[id] = channel }
            return state.isShutDown
        }
        if isShutDown {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.state.withLock { _ = $0.connections.removeValue(forKey: id) }
        }
    }

    /// Closes the listeners and every bridged connection, then removes the socket directory.
    /// Later requests for a pinned host fail.
    func shutdown() -> EventLoopFuture<Void> {
        let (listeners, connections, directory) = state.withLock { state in
            state.isShutDown = true
            defer {
                state.listeners = [:]
                state.connections = [:]
                state.directory = nil
            }
            return (Array(state.listeners.values), Array(state.connections.values), state.directory)
        }
        let eventLoop = group.next()
        let closes =
            listeners.map { listener in
                listener.channel.flatMap { $0.close() }.recover { _ in }
            } + connections.map { $0.close().recover { _ in } }
        return EventLoopFuture.andAllComplete(closes, on: eventLoop).map {
            if let directory {
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }

    /// The socket directory, when one was made; for tests.
    var directoryPath: String? {
        state.withLock { $0.directory }
    }

    /// Listens at `path`; `configure` sets up the pipeline of each accepted connection.
    private func bind(
        path: String, on eventLoop: any EventLoop, configure: @escaping @Sendable (TLSBridge, any Channel) throws -> Void
    ) -> EventLoopFuture<any Channel> {
        // Accepted connections (and their upstream connections, on the same loop) spread over
        // every loop of the group: on the listener's loop alone, all of a host's bridged traffic
        // would share one thread.
        ServerBootstrap(group: eventLoop, childGroup: group)
            .serverChannelOption(.backlog, value: 256)
            // The request waits in the socket until the upstream connection is verified.
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { [weak self] channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let self else { throw ChannelError.ioOnClosedChannel }
                    try configure(self, channel)
                }
            }
            .bind(unixDomainSocketPath: path)
    }

    private static func sslContext(for upstream: Upstream) throws -> NIOSSLContext {
        do {
            return try NIOSSLContext(configuration: upstream.tls)
        } catch {
            throw TLSError.invalidConfiguration("\(error)")
        }
    }

    /// A new directory only this user can enter, under the temporary directory (or `/tmp` when
    /// that path is too long for socket paths).
    static func makePrivateDirectory() throws -> String {
        var base = FileManager.default.temporaryDirectory.path
        if base.utf8.count > 60 { base = "/tmp" }
        if base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/moya-tls-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!)
        }
        guard made != nil else {
            throw TLSError.invalidConfiguration("no private directory for the public-key pinning bridge: errno \(errno)")
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `error` as the error the request reports: a pin mismatch or a rejected certificate as
    /// ``TLSError/serverTrustEvaluationFailed(host:reason:)``.
    private static func describe(_ error: any Error, upstream: Upstream) -> any Error {
        if let mismatch = error as? TLSBridgePinHandler.Mismatch {
            return TLSError.serverTrustEvaluationFailed(
                host: upstream.host,
                reason: "Its public key (\(mismatch.presented)) is none of the pinned keys."
            )
        }
        return TLSError.annotating(error, host: upstream.host)
    }
}
