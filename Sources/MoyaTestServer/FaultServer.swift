import Foundation
import MoyaTesting

/// A server on `127.0.0.1` that misbehaves on purpose, one ``Fault`` per path, writing raw
/// bytes so that it can break HTTP in ways a well-formed server cannot.
///
/// It is a MoyaTesting `MockServer` whose connections skip HTTP altogether. Starting and
/// stopping are `async`; a server released without ``shutdown()`` closes on its own.
public final class FaultServer: Sendable {
    private let server: MockServer

    /// The TCP port the server listens on.
    public var port: Int { self.server.port }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { self.server.baseURL }

    /// How many connections the server has accepted.
    public var acceptedConnections: Int {
        self.server.acceptedConnections
    }

    private init(server: MockServer) {
        self.server = server
    }

    /// Starts a server on an ephemeral port, and returns once it listens.
    ///
    /// - Throws: If the listening socket cannot be bound.
    public static func start() async throws -> FaultServer {
        // Compress the gzip bomb now (once per process), so that serving it is instant even in a
        // slow sanitized build.
        _ = FaultHandler.gzipBomb
        let server = try await MockServer.start(
            MockServer.Configuration(),
            connections: .raw { pipeline in try pipeline.addHandler(FaultHandler()) },
            eventLoopGroup: await TestServerEventLoops.shared()
        )
        return FaultServer(server: server)
    }

    /// The URL of a fault's path on this server.
    public func url(for fault: Fault) -> URL {
        baseURL.appendingPathComponent(fault.rawValue)
    }

    /// Closes the server and its connections, and returns once they are closed.
    public func shutdown() async {
        await self.server.shutdown()
    }
}
