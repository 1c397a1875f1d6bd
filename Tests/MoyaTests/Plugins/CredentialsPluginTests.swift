import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("CredentialsPlugin")
struct CredentialsPluginTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.start()
    }

    private func plugin(_ credential: URLCredential?, calls: Recorder<String>? = nil) -> CredentialsPlugin {
        CredentialsPlugin { target in
            calls?.append("\(target)")
            return credential
        }
    }

    @Test("A Basic challenge is answered once with the credential; the first attempt carries none")
    func answersChallenge() async throws {
        let calls = Recorder<String>()
        let credential = URLCredential(user: "user", password: "passwd", persistence: .none)
        let target = Remote(server.baseURL, "/basic-auth/user/passwd")
        let response = try await sendWithPlugins(target, plugins: [plugin(credential, calls: calls)]).get()
        #expect(response.statusCode == 200)
        let json = try #require(try response.mapJSON() as? [String: Any])
        #expect(json["authenticated"] as? Bool == true)
        #expect(json["user"] as? String == "user")
        #expect(calls.values == ["GET /basic-auth/user/passwd"])
        let requests = server.receivedRequests
        #expect(requests.count == 2)
        #expect(requests.first?.header("Authorization") == nil)
        #expect(requests.last?.header("Authorization") == "Basic " + Data("user:passwd".utf8).base64EncodedString())
    }

    @Test("Wrong credentials: the challenge is answered once and the second 401 is the result")
    func wrongCredentials() async throws {
        let target = Remote(server.baseURL, "/basic-auth/user/passwd", validationType: .successCodes)
        let result = await sendWithPlugins(target, plugins: [plugin(URLCredential(user: "user", password: "wrong", persistence: .forSession))])
        #expect(result.error?.response?.statusCode == 401)
        #expect(server.receivedRequests.count == 2)
    }

    @Test("No credential: the 401 is the result after one attempt")
    func noCredential() async throws {
        let response = try await sendWithPlugins(Remote(server.baseURL, "/basic-auth/user/passwd"), plugins: [plugin(nil)]).get()
        #expect(response.statusCode == 401)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("Challenges of other schemes are not answered")
    func otherScheme() async throws {
        let credential = URLCredential(user: "user", password: "passwd", persistence: .none)
        let response = try await sendWithPlugins(Remote(server.baseURL, "/bearer"), plugins: [plugin(credential)]).get()
        #expect(response.statusCode == 401)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("Without a challenge the credential is never sent")
    func notPreemptive() async throws {
        let credential = URLCredential(user: "user", password: "passwd", persistence: .none)
        let response = try await sendWithPlugins(Remote(server.baseURL, "/echo"), plugins: [plugin(credential)]).get()
        #expect(response.statusCode == 200)
        #expect(server.receivedRequests.count == 1)
        #expect(server.receivedRequests.first?.header("Authorization") == nil)
    }

    @Test("Stubbed requests ask for the credential and are not affected by it")
    func stubbed() async throws {
        let calls = Recorder<String>()
        let credential = URLCredential(user: "user", password: "passwd", persistence: .none)
        let response = try await sendWithPlugins(GitHub.zen, plugins: [plugin(credential, calls: calls)], stub: true).get()
        #expect(calls.values == ["zen"])
        #expect(response.request?.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(try response.mapString() == "Half measures are as bad as nothing at all.")
    }

    @Test("Through MultiTarget the closure gets the MultiTarget, as in Moya")
    func multiTarget() async throws {
        let seen = Recorder<Bool>()
        let plugin = CredentialsPlugin { target in
            seen.append(target is MultiTarget)
            return URLCredential(user: "user", password: "passwd", persistence: .none)
        }
        let response = try await sendWithPlugins(MultiTarget(Remote(server.baseURL, "/basic-auth/user/passwd")), plugins: [plugin]).get()
        #expect(response.statusCode == 200)
        #expect(seen.values == [true])
    }
}
