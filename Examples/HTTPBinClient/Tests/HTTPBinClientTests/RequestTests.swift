import HTTPBinKit
import Moya
import MoyaTesting
import Testing

/// What the server receives for each target: the `TargetType` conformance and the plugins,
/// checked on the wire rather than by reading the target's properties back.
///
/// `.mockServer()` on the suite gives each test (and each argument of a parameterized one) a
/// server of its own, `MockServer.current`, shut down when the test ends.
@Suite("HTTPBin requests", .mockServer())
struct RequestTests {
    /// A target and the request it should become.
    struct Expected: Sendable, CustomTestStringConvertible {
        let target: HTTPBin
        let method: String
        let path: String
        var query: [String: String] = [:]
        var contentType: String?
        var body: ExpectedBody = .empty

        var testDescription: String { "\(method) \(path)" }
    }

    static let targets: [Expected] = [
        // `URLEncoding.queryString` percent-encodes the value; the server decodes it back.
        Expected(target: .echo(name: "Ann & Bob"), method: "GET", path: "/get", query: ["name": "Ann & Bob"]),
        // `.requestJSONEncodable` sends the JSON body and its Content-Type.
        Expected(
            target: .post(message: "hello"),
            method: "POST",
            path: "/post",
            contentType: "application/json",
            body: .json(#"{"message": "hello"}"#)
        ),
        Expected(target: .delay(seconds: 2), method: "GET", path: "/delay/2"),
        Expected(target: .bearerWithoutToken, method: "GET", path: "/bearer"),
        Expected(target: .unavailable, method: "GET", path: "/status/503"),
    ]

    @Test("Each target sends its method, path, query, headers and body", arguments: targets)
    func request(_ expected: Expected) async throws {
        let server = try #require(MockServer.current)
        server.defaultResponse = .json("{}")

        let response = try await provider(for: server).request(expected.target)

        #expect(response.statusCode == 200)
        var headers = ["Accept": "application/json"]
        headers["Content-Type"] = expected.contentType
        server.expectRequest(expected.method, expected.path, query: expected.query, headers: headers, body: expected.body)
        // One request, with nothing more in its query than the target asks for.
        #expect(server.requests.map(\.queryItems.count) == [expected.query.count])
    }

    @Test("AccessTokenPlugin sends the token to .bearer only")
    func bearerToken() async throws {
        let server = try #require(MockServer.current)
        // Like httpbin's /bearer: 200 with a bearer token, 401 without one.
        server.route("GET", "/bearer") { request in
            guard let authorization = request.header("Authorization"), authorization.hasPrefix("Bearer ") else {
                return .status(401)
            }
            return .json(#"{"authenticated": true, "token": "\#(authorization.dropFirst("Bearer ".count))"}"#)
        }
        let provider = provider(for: server, plugins: [AccessTokenPlugin { _ in "t0k3n" }])

        let response = try await provider.request(.bearer)
        #expect(response.statusCode == 200)
        let withoutToken = await error(of: .bearerWithoutToken, with: provider)

        // `validationType` is `.successCodes`: the 401 is a `MoyaError.statusCode`.
        guard case .statusCode(let rejected) = withoutToken else {
            Issue.record("expected MoyaError.statusCode, got \(String(describing: withoutToken))")
            return
        }
        #expect(rejected.statusCode == 401)
        #expect(server.requests.count == 2)
        server.expectRequest("GET", "/bearer", headers: ["Authorization": "Bearer t0k3n"])
        #expect(server.requests.last?.header("Authorization") == nil)
    }
}
