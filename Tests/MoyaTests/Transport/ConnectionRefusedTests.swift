import Foundation
import MoyaTestServer
import NIOCore
import NIOPosix
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A connection the server's machine refuses fails with `cannotConnectToHost`, and its text says
/// which host and port refused, in words.
@Suite("Refused connections")
struct ConnectionRefusedTests {
    /// A loopback port nothing listens on: bound to let the system pick it, then closed.
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }

    @Test("The text names the host and port that refused the connection, without the system's raw error", arguments: ["127.0.0.1", "localhost"])
    func namesHostAndPort(host: String) async throws {
        let port = try await Self.closedPort()
        let url = try #require(URL(string: "http://\(host):\(port)"))
        let result = await send(MoyaProvider<Remote>(), Remote(url, "/echo"))
        let error = try #require(result.error)
        guard case .underlying(let underlying as URLError, nil) = error else {
            Issue.record("expected a URLError, got \(error)")
            return
        }
        #expect(underlying.code == .cannotConnectToHost)
        for text in [error.localizedDescription, error.description, (error as NSError).localizedDescription] {
            #expect(text.contains("\(host):\(port)"), "\(text)")
            #expect(text.contains("refused"), "\(text)")
            #expect(!text.contains("(error set)"), "\(text)")
            #expect(!text.contains("errno:"), "\(text)")
            #expect(!text.contains("The operation could not be completed"), "\(text)")
        }
    }
}
