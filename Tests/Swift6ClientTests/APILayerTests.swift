// Runs APILayer.swift's Moya 15-style code, compiled in the Swift 6 language mode.
import Foundation
import Moya
import MoyaTestServer
import Testing

/// One server for this module, started by the first test that awaits it (a global is made on
/// first use); it points `apiBaseURL` at itself once, before any test that awaited it reads
/// `apiBaseURL`. It runs until the process ends.
let sharedServer = _Concurrency.Task { () throws -> TestServer in
    let server = try await TestServer.start()
    apiBaseURL = server.baseURL
    return server
}

struct FormPart: Decodable {
    let name: String?
    let filename: String?
    let headers: [String: String]
    let body: String?
}

struct FormReply: Decodable {
    let parts: [FormPart]
}

@Suite("A Moya 15 app in the Swift 6 language mode")
struct APILayerTests {
    @Test("Parameters, headers from the URLSessionConfiguration, plugins and the interceptor")
    func request() async throws {
        _ = try await sharedServer.value
        let provider = ShopProvider()
        let echo = try await provider.request(.products(page: 2, tags: ["a", "b"])).map(Echo.self)
        #expect(echo.uri == "/echo?page=2&tags=a&tags=b")
        #expect(echo.headers["x-client"] == "shop-ios")
        #expect(echo.headers["x-request-counter"] == "1")
        #expect(echo.headers["authorization"] == "Bearer expired")
        #expect(echo.headers["accept-language"] != nil)
        #expect(provider.counter.seen == ["GET"])

        let created = try await provider.request(.create(name: "Lamp", price: 9.5)).map(Echo.self)
        #expect(try JSONDecoder().decode(NewProduct.self, from: Data((created.body ?? "").utf8)).name == "Lamp")
    }

    @Test("A 401 is refreshed and retried by the Alamofire-style interceptor")
    func tokenRefresh() async throws {
        _ = try await sharedServer.value
        let provider = ShopProvider()
        let response = try await provider.request(.protected)
        #expect(response.statusCode == 200)
        #expect(provider.credentials.refreshCount == 1)
    }

    @Test("Multipart uploads in Moya 15.0.x's shape")
    func multipart() async throws {
        let server = try await sharedServer.value
        let provider = ShopProvider()
        let reply = try await provider.request(.uploadPhoto(productID: 7, photo: Data("JPEG".utf8))).map(FormReply.self)
        #expect(reply.parts.map(\.name) == ["photo", "product"])
        #expect(reply.parts[0].filename == "photo.jpg")
        #expect(reply.parts[0].headers["content-type"] == "image/jpeg")
        #expect(reply.parts[1].body == "7")
        #expect(server.receivedRequests.contains { $0.uri == "/multipart?draft=1" })

        let manual = FileManager.default.temporaryDirectory.appendingPathComponent("manual-\(UUID().uuidString).bin")
        try Data("PDF".utf8).write(to: manual)
        defer { try? FileManager.default.removeItem(at: manual) }
        let file = try await provider.request(.uploadManual(fileURL: manual)).map(FormReply.self)
        #expect(file.parts.map(\.filename) == ["manual.pdf"])
        #expect(file.parts[0].headers["content-type"] == "application/pdf")
    }

    @Test("Errors, tokens, sessions and forms as apps use them")
    func surroundings() throws {
        #expect(message(for: .statusCode(Response(statusCode: 401, data: Data()))) == "Please sign in again.")
        var cancelled = 0
        let token = makeToken { cancelled += 1 }
        token.cancel()
        token.cancel()
        #expect(cancelled == 1)
        let body = String(decoding: try manualForm(), as: UTF8.self)
        #expect(body.contains("Content-Disposition: form-data; name=\"raw\"\r\nContent-Type: text/plain\r\n\r\nraw"))
        let session = ShopProvider().pinnedSession(pins: [])
        let manager = try #require(session.configuration.serverTrustManager)
        #expect(try manager.serverTrustEvaluator(forHost: "api.example.com") is PinnedCertificatesTrustEvaluator)
        #expect(URLEncoding.ArrayEncoding.noBrackets == .noBrackets)
        #expect(URLEncoding.ArrayEncoding.brackets != .noBrackets)
    }
}
