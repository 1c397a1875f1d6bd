import Foundation
import Moya
import MoyaTestServer
import MoyaTesting
import Testing

@Suite("Cassettes: secrets never reach the file")
struct CassetteRedactionTests {
    @Test("An Authorization header and a token query item are hidden, also where the server echoes them")
    func headerAndQuery() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await TestServer.start()
        let target = CassetteTarget.query(
            server.baseURL, "/echo", ["token": "query-secret-4711", "page": 3],
            headers: ["Authorization": "Bearer header-secret-0815", "X-Trace": "visible-trace"]
        )
        let provider = try MoyaProvider<CassetteTarget>(cassette: url, mode: .record)
        let live = try await provider.request(target)
        await server.shutdown()
        // The server did get the secrets, and echoed them.
        let echoed = String(decoding: live.data, as: UTF8.self)
        #expect(echoed.contains("header-secret-0815"))
        #expect(echoed.contains("query-secret-4711"))

        let text = try cassetteText(url)
        #expect(!text.contains("header-secret-0815"))
        #expect(!text.contains("query-secret-4711"))
        #expect(text.contains(#""Authorization" : "Bearer ***""#))
        #expect(text.contains("token=***"))
        #expect(text.contains("page=3"))
        #expect(text.contains("visible-trace"))

        // Replaying matches whatever the secrets are now: hidden values are never compared.
        let replaying = try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay, matching: CassetteMatching(headers: ["Authorization"]))
        let rotated = CassetteTarget.query(
            server.baseURL, "/echo", ["token": "a-new-query-secret", "page": 3],
            headers: ["Authorization": "Bearer a-new-header-secret", "X-Trace": "visible-trace"]
        )
        let replayed = try await replaying.request(rotated)
        #expect(replayed.statusCode == 200)
        #expect(!String(decoding: replayed.data, as: UTF8.self).contains("header-secret-0815"))
        // The scheme of the authorization is still compared.
        let basic = CassetteTarget.query(server.baseURL, "/echo", ["token": "x", "page": 3], headers: ["Authorization": "Basic dXNlcjpwYXNz"])
        let error = try #require(cassetteError(await outcome(replaying, basic)))
        #expect(error.description.contains(#"header Authorization: "Basic ***" instead of "Bearer ***""#))
    }

    @Test("Password fields of JSON and form bodies, cookies and custom names are hidden")
    func bodiesAndCookies() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await MockServer.start()
        server.enqueue(
            .json(#"{"user": {"name": "ann", "access_token": "response-secret-1234"}, "next": "/page?api_key=key-secret-5678&n=2"}"#),
            .text("ok", headers: [("Set-Cookie", "session=cookie-secret-9999; Path=/; HttpOnly")]),
            .text("fine", headers: [("Link", #"<https://api.test/items?page=2&access_token=link-secret-3333>; rel="next""#)])
        )
        let redaction = NetworkLoggerPlugin.Configuration.Redaction.default.redacting(headers: "X-Api-Key").redacting(parameters: "pass_phrase")
        let provider = try MoyaProvider<CassetteTarget>(cassette: url, mode: .record, redaction: redaction)
        _ = try await provider.request(.post(server.baseURL, "/login", body: #"{"name": "ann", "password": "json-password-42"}"#))
        _ = try await provider.request(
            .post(server.baseURL, "/form", body: "user=ann&pass_phrase=form-phrase-77", contentType: "application/x-www-form-urlencoded"))
        _ = try await provider.request(CassetteTarget(server.baseURL, "/custom", headers: ["X-Api-Key": "custom-header-secret"]))
        await server.shutdown()
        #expect(server.requests.map(\.path) == ["/login", "/form", "/custom"])

        let text = try cassetteText(url)
        for secret in [
            "json-password-42", "response-secret-1234", "key-secret-5678", "cookie-secret-9999", "form-phrase-77", "custom-header-secret", "link-secret-3333",
        ] {
            #expect(!text.contains(secret), "\(secret) is in the cassette")
        }
        let cassette = try Cassette(contentsOf: url)
        let login = cassette.interactions[0]
        #expect(login.request.body?.content == #"{"name": "ann", "password": "***"}"#)
        #expect(login.response.body?.content == #"{"user": {"name": "ann", "access_token": "***"}, "next": "/page?api_key=***&n=2"}"#)
        #expect(cassette.interactions[1].request.body?.content == "user=ann&pass_phrase=***")
        #expect(cassette.interactions[1].response.headers["Set-Cookie"] == "***")
        #expect(cassette.interactions[2].request.headers["X-Api-Key"] == "***")
        #expect(cassette.interactions[2].response.headers["Link"] == #"<https://api.test/items?page=2&access_token=***>; rel="next""#)
        // The announced length follows the hidden body.
        let length = try #require(login.response.headers.first { $0.key.lowercased() == "content-length" }?.value)
        #expect(Int(length) == login.response.body?.data.count)

        // The same requests replay, passwords and all.
        let replaying = try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay, redaction: redaction)
        let replayed = try await replaying.request(.post(server.baseURL, "/login", body: #"{"password": "another-password", "name": "ann"}"#))
        #expect(try replayed.mapString().contains(#""access_token": "***""#))
    }

    @Test("The logger's rules apply in full: a body that is not quite JSON is hidden as text, and what it hid is hidden elsewhere")
    func malformedJSONAndHeaderPairs() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await MockServer.start()
        server.enqueue(.text("you sent malformed-secret-77", headers: [("Location", "/next?session_id=location-secret-1234&page=2")]))
        let provider = try MoyaProvider<CassetteTarget>(cassette: url, mode: .record)
        _ = try await provider.request(.post(server.baseURL, "/login", body: #"{"name": "ann", "password": "malformed-secret-77", "#))
        await server.shutdown()

        let text = try cassetteText(url)
        #expect(!text.contains("malformed-secret-77"))
        #expect(!text.contains("location-secret-1234"))
        let interaction = try #require(try Cassette(contentsOf: url).interactions.first)
        #expect(interaction.request.body?.content == #"{"name": "ann", "password": "***", "#)
        #expect(interaction.response.body?.content == "you sent ***")
        #expect(interaction.response.headers["Location"] == "/next?session_id=***&page=2")
    }
}
