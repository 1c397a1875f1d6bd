import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A final response with an informational status (`1xx`) fails the request: it ends no HTTP
/// exchange.
@Suite("Informational statuses as final responses")
struct InformationalResponseTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    private func provider(general: Bool) -> MoyaProvider<Remote> {
        MoyaProvider<Remote>(plugins: general ? [RecordingPlugin()] : [])
    }

    @Test("A 101 Switching Protocols as the answer fails the request", arguments: [false, true])
    func switchingProtocols(general: Bool) async throws {
        let result = await send(provider(general: general), Remote(base, "/informational/101"))
        guard case .underlying(let error as SessionError, nil)? = result.error else {
            Issue.record("expected SessionError, got \(result)")
            return
        }
        #expect(error == .informationalResponse(statusCode: 101))
        #expect(result.error?.localizedDescription.contains("101 (Switching Protocols)") == true)
    }

    @Test("A 101 Switching Protocols as the answer to a download fails it, leaving no file")
    func switchingProtocolsDownload() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("download.bin")
        let target = Remote(base, "/informational/101", task: .downloadDestination { _, _ in (file, []) })
        let result = await send(MoyaProvider<Remote>(), target)
        guard case .underlying(let error as SessionError, nil)? = result.error else {
            Issue.record("expected SessionError, got \(result)")
            return
        }
        #expect(error == .informationalResponse(statusCode: 101))
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }
}
