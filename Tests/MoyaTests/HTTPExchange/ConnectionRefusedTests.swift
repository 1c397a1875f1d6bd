import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A connection the server's machine refuses fails with `cannotConnectToHost`, and its text says
/// which host and port refused, in words.
@Suite("Refused connections")
struct ConnectionRefusedTests {
    @Test("The text names the host and port that refused the connection, without the system's raw error", arguments: ["127.0.0.1", "localhost"])
    func namesHostAndPort(host: String) async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
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
