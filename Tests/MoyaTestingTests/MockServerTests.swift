import Foundation
import Moya
import MoyaTesting
import Testing

@Suite("MockServer: scripted responses and recorded requests")
struct MockServerTests {
    @Test("A queued response reaches the provider, and the request is recorded")
    func queuedResponse() async throws {
        let server = try await MockServer.start()
        server.enqueue(.json(#"{"id": 1}"#, status: 201))
        let provider = MoyaProvider<MultiTarget>()
        _ = provider
        await server.shutdown()
    }
}
