// Runs the Moya 15-style networking layer of AppNetworkLayer.swift against the test server.
import Foundation
import Moya
import MoyaTestServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the multipart route reports.
struct FormReport: Decodable {
    struct Part: Decodable {
        let headers: [String: String]
        let name: String?
        let filename: String?
        let body: String?
    }
    let parts: [Part]
}

@Suite("A Moya 15 app's networking layer")
struct AppNetworkLayerTests {
    @Test("The provider subclass sends the configuration's headers and the interceptor's token")
    func providerSubclass() async throws {
        _ = try await sharedServer.value
        let provider = AppProvider()
        let echo = try decodeEcho(try await provider.request(.profile(id: 3)))
        #expect(echo.uri == "/echo?id=3")
        #expect(echo.headers["x-app-version"] == "1.2.3")
        #expect(echo.headers["accept"] == "application/json")
        #expect(echo.headers["user-agent"]?.contains("Moya/") == true)
        #expect(echo.headers["authorization"] == "Bearer stale-token")
    }

    @Test("An Alamofire-style interceptor refreshes the token on a 401 and retries once")
    func alamofireInterceptor() async throws {
        _ = try await sharedServer.value
        let provider = AppProvider()
        let response = try await provider.request(.secret)
        #expect(response.statusCode == 200)
        #expect(provider.store.refreshCount == 1)
        #expect(provider.store.token == "fresh-token")
    }

    @Test("Multipart parts in Moya 15.0.x's shape arrive with their names, file names and types, in order")
    func multipart() async throws {
        let server = try await sharedServer.value
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("moya-app-\(UUID().uuidString).txt")
        try Data("notes".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let provider = AppProvider()
        let response = try await provider.request(.avatar(imageData: Data("PNG".utf8), fileURL: file, description: "me"))
        let report = try JSONDecoder().decode(FormReport.self, from: response.data)
        #expect(report.parts.map(\.name) == ["image", "file", "description"])
        #expect(report.parts[0].filename == "avatar.png")
        #expect(report.parts[0].headers["content-type"] == "image/png")
        #expect(report.parts[1].filename == file.lastPathComponent)
        #expect(report.parts[1].headers["content-type"] == "text/plain")
        #expect(report.parts[2].body == "me")
        #expect(report.parts[2].filename == nil)

        let composite = try await provider.request(.avatarWithQuery(imageData: Data("JPG".utf8), userID: 9))
        let compositeReport = try JSONDecoder().decode(FormReport.self, from: composite.data)
        #expect(compositeReport.parts.map(\.filename) == ["a.jpg"])
        #expect(server.receivedRequests.contains { $0.uri == "/multipart?user=9" })
    }

    @Test("A pinned session from the documentation's recipe keeps its trust manager")
    func pinnedSession() throws {
        let session = makePinnedSession(certificates: [])
        #expect(session.configuration.serverTrustManager?.evaluators["example.com"] is PinnedCertificatesTrustEvaluator)
        #expect(describe(.statusCode(Response(statusCode: 418, data: Data()))) == "status 418")
    }
}
