import Foundation
import Moya
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Cassettes: matching requests with recorded interactions")
struct CassetteMatchingTests {
    /// A cassette with one `POST` per body, answered with the body's number.
    private static func cassette(_ requests: [(url: String, body: String?, headers: [String: String])]) -> Cassette {
        Cassette(
            interactions: requests.enumerated().map { index, request in
                CassetteInteraction(
                    request: .init(method: "POST", url: request.url, headers: request.headers, body: request.body.map { CassetteBody(Data($0.utf8)) }),
                    response: .init(status: 200, body: CassetteBody(Data("answer \(index + 1)".utf8)))
                )
            })
    }

    private static func request(_ url: String, body: String?, headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = body.map { Data($0.utf8) }
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    private static func answer(_ result: Result<CassetteInteraction, CassetteError>) -> String? {
        guard case .success(let interaction) = result else { return nil }
        return interaction.response.body?.content
    }

    @Test("Query items match in any order; the rest of the URL must be the same")
    func queryOrder() {
        let player = CassettePlayer(
            cassette: Self.cassette([("http://api.test:8080/items?a=1&b=2&b=3", nil, [:])]), matching: CassetteMatching(reusesInteractions: true))
        #expect(Self.answer(player.interaction(for: Self.request("http://api.test:8080/items?b=3&a=1&b=2", body: nil))) == "answer 1")
        #expect(Self.answer(player.interaction(for: Self.request("HTTP://API.test:8080/items?a=1&b=2&b=3", body: nil))) == "answer 1")
        #expect(Self.answer(player.interaction(for: Self.request("http://api.test:8080/items?a=1&b=2", body: nil))) == nil)
        #expect(Self.answer(player.interaction(for: Self.request("http://api.test:8081/items?a=1&b=2&b=3", body: nil))) == nil)
        guard case .failure(let error) = player.interaction(for: Self.request("http://api.test:8080/item?a=1&b=2&b=3", body: nil)) else {
            Issue.record("matched")
            return
        }
        #expect(error.description.contains("path /item instead of /items"))
    }

    @Test("Bodies match by value for JSON, byte for byte otherwise, and not at all when body matching is off")
    func bodies() throws {
        let cassette = Self.cassette([
            ("http://api.test/users", #"{"name": "Ann", "age": 30}"#, [:]),
            ("http://api.test/users", #"{"name": "Bob", "age": 40}"#, [:]),
            ("http://api.test/notes", "plain text", [:]),
        ])
        let player = CassettePlayer(cassette: cassette)
        // Member order and spacing do not matter; the second recorded body answers the second.
        #expect(Self.answer(player.interaction(for: Self.request("http://api.test/users", body: #"{"age":40,"name":"Bob"}"#))) == "answer 2")
        #expect(Self.answer(player.interaction(for: Self.request("http://api.test/users", body: #"{"age":30,"name":"Ann"}"#))) == "answer 1")
        #expect(Self.answer(player.interaction(for: Self.request("http://api.test/notes", body: "plain text"))) == "answer 3")

        let strict = CassettePlayer(cassette: cassette)
        guard case .failure(let error) = strict.interaction(for: Self.request("http://api.test/users", body: #"{"name": "Cid", "age": 50}"#)) else {
            Issue.record("matched")
            return
        }
        #expect(error.description.contains("The closest is #1 of 3, POST http://api.test/users"))
        #expect(error.description.contains(#"body "{\"name\": \"Cid\", \"age\": 50}" instead of "{\"name\": \"Ann\", \"age\": 30}""#))
        #expect(Self.answer(strict.interaction(for: Self.request("http://api.test/notes", body: "plain text!"))) == nil)

        let loose = CassettePlayer(cassette: cassette, matching: .methodAndURL)
        #expect(Self.answer(loose.interaction(for: Self.request("http://api.test/users", body: #"{"name": "Cid"}"#))) == "answer 1")
        #expect(Self.answer(loose.interaction(for: Self.request("http://api.test/users", body: nil))) == "answer 2")
        #expect(loose.unusedInteractions.map(\.request.url) == ["http://api.test/notes"])
    }

    @Test("Listed headers must match (names in any case); others never do")
    func headers() {
        let cassette = Self.cassette([
            ("http://api.test/v", nil, ["X-Api-Version": "1", "X-Request-Id": "a"]),
            ("http://api.test/v", nil, ["X-Api-Version": "2", "X-Request-Id": "b"]),
        ])
        let player = CassettePlayer(cassette: cassette, matching: CassetteMatching(headers: ["x-api-version"]))
        #expect(
            Self.answer(player.interaction(for: Self.request("http://api.test/v", body: nil, headers: ["X-API-VERSION": "2", "X-Request-Id": "z"])))
                == "answer 2")
        guard case .failure(let error) = player.interaction(for: Self.request("http://api.test/v", body: nil, headers: ["X-Api-Version": "3"])) else {
            Issue.record("matched")
            return
        }
        #expect(error.description.contains(#"header x-api-version: "3" instead of "1""#))
        guard case .failure(let missing) = player.interaction(for: Self.request("http://api.test/v", body: nil)) else {
            Issue.record("matched")
            return
        }
        #expect(missing.description.contains(#"header x-api-version: none instead of "1""#))

        let ignoring = CassettePlayer(cassette: cassette)
        #expect(Self.answer(ignoring.interaction(for: Self.request("http://api.test/v", body: nil, headers: ["X-Api-Version": "3"]))) == "answer 1")
    }

    @Test("An empty cassette says so")
    func emptyCassette() {
        let player = CassettePlayer(cassette: Cassette())
        guard case .failure(let error) = player.interaction(for: Self.request("http://api.test/", body: nil)) else {
            Issue.record("matched")
            return
        }
        #expect(error == .noMatch(request: "POST http://api.test/", reason: "The cassette is empty."))
    }

    @Test("A delayed stub behavior is kept, and never is turned into immediate")
    func stubBehavior() {
        let player = CassettePlayer(cassette: Cassette())
        let delayed: (CassetteTarget) -> StubBehavior = player.stubClosure(.delayed(seconds: 0.5))
        let never: (CassetteTarget) -> StubBehavior = player.stubClosure(.never)
        let target = CassetteTarget(URL(string: "http://api.test")!, "/")
        #expect(delayed(target) == .delayed(seconds: 0.5))
        #expect(never(target) == .immediate)
    }
}
