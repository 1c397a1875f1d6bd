import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// How the connections of a server are set up: the ``MockServer`` handler alone, the handler in
/// front of other HTTP/1.1 handlers that answer what it was not scripted for, or raw handlers
/// with no HTTP at all (servers that break HTTP on purpose).
package enum ConnectionSetup: Sendable {
    /// Scripted answers only.
    case mock
    /// Requests the script has no answer for go on, through the HTTP/1.1 pipeline, to the
    /// handlers `addHandlers` adds after the mock handler.
    case forwardingUnscripted(addHandlers: @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void)
    /// No HTTP: the handlers `addHandlers` adds read and write raw bytes.
    case raw(addHandlers: @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void)
}

/// The listening socket of a ``MockServer`` and every connection it accepted, so that closing
/// the server closes them all.
///
/// All servers of the process share ``eventLoopGroup``; the state sits behind one lock.
final class MockServerListener: Sendable {
    /// The event loops of every mock server in the process: started on first use and never shut
    /// down (a process-wide resource, as `MultiThreadedEventLoopGroup.singleton` is).
    static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: max(2, System.coreCount))

    private struct State {
        var connections: [ObjectIdentifier: any Channel] = [:]
        var accepted = 0
        var isClosed = false
    }

    private let serverChannel: any Channel
    private let state: NIOLockedValueBox<State>

    private init(serverChannel: any Channel, state: NIOLockedValueBox<State>) {
        self.serverChannel = serverChannel
        self.state = state
    }

    /// How many connections were accepted.
    var acceptedConnections: Int {
        self.state.withLockedValue { $0.accepted }
    }

    /// How many accepted connections are still open.
    var openConnections: Int {
        self.state.withLockedValue { $0.connections.count }
    }

    /// Binds a listening socket as `configuration` says and returns it with its port.
    static func bind(
        configuration: MockServer.Configuration,
        connections setup: ConnectionSetup,
        eventLoopGroup: any EventLoopGroup,
        script: ResponseScript,
        journal: RequestJournal<MockRequest>
    ) async throws -> (MockServerListener, Int) {
        let sslContext = try configuration.tls.map { try makeSSLContext($0, offersHTTP2: configuration.offersHTTP2) }
        let state = NIOLockedValueBox(State())
        let handlerSettings = MockServerHandler.Settings(
            script: script,
            journal: journal,
            maximumRecordedBodySize: configuration.maximumRecordedBodySize,
            forwardsUnscripted: { if case .forwardingUnscripted = setup { return true } else { return false } }()
        )
        let offersHTTP2 = configuration.offersHTTP2 && sslContext != nil
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let admitted = state.withLockedValue { state -> Bool in
                    state.accepted += 1
                    guard !state.isClosed else { return false }
                    state.connections[ObjectIdentifier(channel)] = channel
                    return true
                }
                guard admitted else { return channel.close() }
                channel.closeFuture.whenComplete { _ in
                    state.withLockedValue { _ = $0.connections.removeValue(forKey: ObjectIdentifier(channel)) }
                }
                return Self.configure(channel, setup: setup, sslContext: sslContext, offersHTTP2: offersHTTP2, settings: handlerSettings)
            }
        let channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw MockServerError.noLocalAddress
        }
        return (MockServerListener(serverChannel: channel, state: state), port)
    }

    private static func configure(
        _ channel: any Channel,
        setup: ConnectionSetup,
        sslContext: NIOSSLContext?,
        offersHTTP2: Bool,
        settings: MockServerHandler.Settings
    ) -> EventLoopFuture<Void> {
        do {
            let sync = channel.pipeline.syncOperations
            if let sslContext {
                try sync.addHandler(NIOSSLServerHandler(context: sslContext))
            }
            switch setup {
            case .raw(let addHandlers):
                try addHandlers(sync)
                return channel.eventLoop.makeSucceededVoidFuture()
            case .forwardingUnscripted(let addHandlers):
                try sync.configureHTTPServerPipeline(
                    withPipeliningAssistance: true,
                    withServerUpgrade: MockServerWebSocketUpgrade.configuration(settings: settings, isSecure: sslContext != nil),
                    withErrorHandling: true)
                try sync.addHandler(MockServerHandler(settings: settings))
                try addHandlers(sync)
                return channel.eventLoop.makeSucceededVoidFuture()
            case .mock where offersHTTP2:
                // HTTP/2 or HTTP/1.1 as ALPN decides; over HTTP/1.1 (a WebSocket client offers
                // nothing else) the WebSocket routes are served as without TLS.
                return channel.configureHTTP2SecureUpgrade(
                    h2ChannelConfigurator: { connection in
                        connection.configureHTTP2Pipeline(mode: .server, targetWindowSize: 65535) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandlers(HTTP2FramePayloadToHTTP1ServerCodec(), MockServerHandler(settings: settings))
                            }
                        }.map { _ in () }
                    },
                    http1ChannelConfigurator: { connection in
                        connection.eventLoop.makeCompletedFuture {
                            let sync = connection.pipeline.syncOperations
                            try sync.configureHTTPServerPipeline(
                                withPipeliningAssistance: true,
                                withServerUpgrade: MockServerWebSocketUpgrade.configuration(settings: settings, isSecure: true),
                                withErrorHandling: true)
                            try sync.addHandler(MockServerHandler(settings: settings))
                        }
                    })
            case .mock:
                try sync.configureHTTPServerPipeline(
                    withPipeliningAssistance: true,
                    withServerUpgrade: MockServerWebSocketUpgrade.configuration(settings: settings, isSecure: sslContext != nil),
                    withErrorHandling: true)
                try sync.addHandler(MockServerHandler(settings: settings))
                return channel.eventLoop.makeSucceededVoidFuture()
            }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    private static func makeSSLContext(_ tls: MockServer.TLS, offersHTTP2: Bool) throws -> NIOSSLContext {
        do {
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(tls.certificateChainPEM.utf8))
            guard !chain.isEmpty else { throw MockServerError.invalidConfiguration("the certificate chain PEM holds no certificate") }
            let key = try NIOSSLPrivateKey(bytes: Array(tls.privateKeyPEM.utf8), format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) },
                privateKey: .privateKey(key)
            )
            configuration.applicationProtocols = offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
            if let trusted = tls.trustedClientCertificatesPEM {
                let roots = try trusted.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
                configuration.certificateVerification = .noHostnameVerification
                configuration.trustRoots = .certificates(roots)
            }
            return try NIOSSLContext(configuration: configuration)
        } catch let error as MockServerError {
            throw error
        } catch {
            throw MockServerError.invalidConfiguration("TLS: \(error)")
        }
    }

    /// Closes the listening socket and every connection, and waits until they are closed. Only
    /// the first close does anything.
    func close() async {
        guard let connections = self.markClosed() else { return }
        try? await self.serverChannel.close()
        for connection in connections {
            try? await connection.close()
        }
    }

    /// Starts closing everything without waiting (for a server released without ``close()``).
    /// Only the first close does anything, so that nothing is sent to an event loop its owner
    /// has shut down since.
    func closeWithoutWaiting() {
        guard let connections = self.markClosed() else { return }
        self.serverChannel.close(promise: nil)
        for connection in connections {
            connection.close(promise: nil)
        }
    }

    /// Marks the listener closed and returns the connections to close, or `nil` when it was
    /// closed already.
    private func markClosed() -> [any Channel]? {
        self.state.withLockedValue { state in
            guard !state.isClosed else { return nil }
            state.isClosed = true
            defer { state.connections.removeAll() }
            return Array(state.connections.values)
        }
    }
}
