import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A target with a chosen authorization type.
private struct AuthTarget: TargetType, AccessTokenAuthorizable, CustomStringConvertible {
    var baseURL = URL(string: "https://api.example.com")!
    var path = "/me"
    var method: Moya.Method = .get
    var task: Task = .requestPlain
    var headers: [String: String]? = nil
    var authorizationType: AuthorizationType?
    var description: String { "AuthTarget(\(authorizationType.map(\.value) ?? "none"))" }
}

@Suite("AccessTokenPlugin")
struct AccessTokenPluginTests {
    @Test(
        "Each authorization type writes its scheme before the token, verbatim",
        arguments: [
            (AuthorizationType.bearer, "Bearer abc.def"),
            (.basic, "Basic abc.def"),
            (.custom("Token"), "Token abc.def"),
            (.custom(""), " abc.def"),
        ])
    func header(type: AuthorizationType, expected: String) async throws {
        let plugin = AccessTokenPlugin { _ in "abc.def" }
        let response = try await sendWithPlugins(AuthTarget(authorizationType: type), plugins: [plugin], stub: true).get()
        #expect(response.request?.value(forHTTPHeaderField: "Authorization") == expected)
    }

    @Test("AuthorizationType values and equality")
    func authorizationTypeValues() {
        #expect(AuthorizationType.basic.value == "Basic")
        #expect(AuthorizationType.bearer.value == "Bearer")
        #expect(AuthorizationType.custom("MAC").value == "MAC")
        #expect(AuthorizationType.custom("MAC") == .custom("MAC"))
        #expect(AuthorizationType.custom("MAC") != .custom("Mac"))
        #expect(AuthorizationType.basic != .bearer)
    }

    @Test("A nil authorization type or a target that is not AccessTokenAuthorizable is left alone, and the token is not asked for")
    func untouched() async throws {
        let asked = Recorder<Int>()
        let plugin = AccessTokenPlugin { _ in
            asked.append(1)
            return "abc"
        }
        let none = try await sendWithPlugins(AuthTarget(authorizationType: nil), plugins: [plugin], stub: true).get()
        #expect(none.request?.allHTTPHeaderFields?["Authorization"] == nil)
        let plain = try await sendWithPlugins(GitHub.zen, plugins: [plugin], stub: true).get()
        #expect(plain.request?.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(asked.values.isEmpty)
    }

    @Test("An existing Authorization header is replaced, not comma-joined")
    func replaces() async throws {
        let plugin = AccessTokenPlugin { _ in "new" }
        let target = AuthTarget(headers: ["authorization": "Bearer old"], authorizationType: .bearer)
        let response = try await sendWithPlugins(target, plugins: [plugin], stub: true).get()
        #expect(response.request?.value(forHTTPHeaderField: "Authorization") == "Bearer new")
        #expect(response.request?.allHTTPHeaderFields?.count == 1)
    }

    @Test("Through MultiTarget: the wrapped target's type is used and the token closure gets the wrapped target")
    func multiTarget() async throws {
        let seen = Recorder<String>()
        let plugin = AccessTokenPlugin { target in
            seen.append("\(type(of: target))")
            return "t"
        }
        let wrapped = MultiTarget(AuthTarget(authorizationType: .custom("Key")))
        #expect(wrapped.authorizationType == .custom("Key"))
        #expect(MultiTarget(GitHub.zen).authorizationType == nil)
        let response = try await sendWithPlugins(wrapped, plugins: [plugin], stub: true).get()
        #expect(response.request?.value(forHTTPHeaderField: "Authorization") == "Key t")
        let twice = try await sendWithPlugins(MultiTarget(wrapped), plugins: [plugin], stub: true).get()
        #expect(twice.request?.value(forHTTPHeaderField: "Authorization") == "Key t")
        #expect(seen.values == ["AuthTarget", "AuthTarget"])
        let plain = try await sendWithPlugins(MultiTarget(GitHub.zen), plugins: [plugin], stub: true).get()
        #expect(plain.request?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test("The token is read for every request, so a refreshed token is used at once")
    func currentToken() async throws {
        let tokens = Recorder<String>()
        tokens.append("first")
        let plugin = AccessTokenPlugin { _ in tokens.values.last ?? "" }
        let first = try await sendWithPlugins(AuthTarget(authorizationType: .bearer), plugins: [plugin], stub: true).get()
        tokens.append("second")
        let second = try await sendWithPlugins(AuthTarget(authorizationType: .bearer), plugins: [plugin], stub: true).get()
        #expect(first.request?.value(forHTTPHeaderField: "Authorization") == "Bearer first")
        #expect(second.request?.value(forHTTPHeaderField: "Authorization") == "Bearer second")
    }

    @Test("Real requests carry the header to the server")
    func real() async throws {
        let server = try await TestServer.start()
        let plugin = AccessTokenPlugin { _ in "s3cret" }
        let target = AuthTarget(baseURL: server.baseURL, path: "/bearer", authorizationType: .bearer)
        let response = try await sendWithPlugins(target, plugins: [plugin]).get()
        #expect(response.statusCode == 200)
        let json = try #require(try response.mapJSON() as? [String: Any])
        #expect(json["authenticated"] as? Bool == true)
        #expect(json["token"] as? String == "s3cret")
        #expect(server.receivedRequests.first?.header("Authorization") == "Bearer s3cret")
        let missing = try await sendWithPlugins(AuthTarget(baseURL: server.baseURL, path: "/bearer", authorizationType: nil), plugins: [plugin]).get()
        #expect(missing.statusCode == 401)
        await server.shutdown()
    }
}
