import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A bearer token, possibly already expired.
struct TestCredential: AuthenticationCredential {
    let token: String
    var requiresRefresh = false
}

/// Counts refreshes; hands out `newToken`, or fails when it is `nil`.
struct TestAuthenticator: Authenticator {
    struct RefreshFailure: Error {}

    let newToken: String?
    let refreshes = Locked(0)

    func apply(_ credential: TestCredential, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.token)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: TestCredential) async throws -> TestCredential {
        refreshes.update { $0 += 1 }
        // Time is the behaviour under test: a slow refresh, long enough for concurrent requests
        // to pile up behind it.
        try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
        guard let newToken else { throw RefreshFailure() }
        return TestCredential(token: newToken)
    }
}

@Suite("AuthenticationInterceptor against the in-process server")
struct AuthenticationInterceptorTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    func sendConcurrently(_ count: Int, provider: MoyaProvider<Remote>, path: String, validation: ValidationType = .none) async -> [Result<
        Moya.Response, MoyaError
    >] {
        let base = self.base
        return await withTaskGroup(of: UncheckedResult.self) { group in
            for _ in 0..<count {
                group.addTask { UncheckedResult(await send(provider, Remote(base, path, validationType: validation))) }
            }
            var results: [Result<Moya.Response, MoyaError>] = []
            for await result in group { results.append(result.result) }
            return results
        }
    }

    @Test("20 concurrent requests refused with 401 cause exactly one refresh, and all succeed after it")
    func concurrentRefresh() async throws {
        let authenticator = TestAuthenticator(newToken: "fresh")
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: TestCredential(token: "stale"))
        let provider = MoyaProvider<Remote>(interceptors: [interceptor])
        let results = await sendConcurrently(20, provider: provider, path: "/token/fresh", validation: .successCodes)
        #expect(results.count == 20)
        for result in results {
            #expect(result.response?.statusCode == 200)
            #expect(result.response?.request?.value(forHTTPHeaderField: "Authorization") == "Bearer fresh")
        }
        #expect(authenticator.refreshes.value == 1)
        #expect(interceptor.credential?.token == "fresh")
    }

    @Test("A failing refresh fails every waiting request with refreshFailed, after one refresh")
    func failingRefresh() async throws {
        let authenticator = TestAuthenticator(newToken: nil)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: TestCredential(token: "stale"))
        let provider = MoyaProvider<Remote>(interceptors: [interceptor])
        let results = await sendConcurrently(20, provider: provider, path: "/token/fresh")
        #expect(results.count == 20)
        for result in results {
            guard case .underlying(let error, _)? = result.error, let authError = error as? AuthenticationError,
                case .refreshFailed(let cause) = authError
            else {
                Issue.record("expected refreshFailed, got \(result)")
                continue
            }
            #expect(cause is TestAuthenticator.RefreshFailure)
            #expect(authError.description.hasPrefix("Refreshing the credential failed"))
        }
        #expect(authenticator.refreshes.value == 1)

        // Setting a new credential clears the failure.
        interceptor.credential = TestCredential(token: "fresh")
        let recovered = await send(provider, Remote(base, "/token/fresh"))
        #expect(recovered.response?.statusCode == 200)
    }

    @Test("An expired credential is refreshed before the request goes out")
    func expiredCredential() async throws {
        let authenticator = TestAuthenticator(newToken: "fresh")
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: TestCredential(token: "stale", requiresRefresh: true))
        let provider = MoyaProvider<Remote>(interceptors: [interceptor])
        let result = await send(provider, Remote(base, "/token/fresh"))
        #expect(result.response?.statusCode == 200)
        #expect(authenticator.refreshes.value == 1)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("Refreshed credentials that keep being refused end in excessiveRefresh")
    func keepsFailing() async throws {
        let authenticator = TestAuthenticator(newToken: "still-wrong")
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: TestCredential(token: "stale"))
        let provider = MoyaProvider<Remote>(interceptors: [interceptor])
        let result = await send(provider, Remote(base, "/token/fresh"))
        guard case .underlying(let error, let response)? = result.error, case .excessiveRefresh? = error as? AuthenticationError else {
            Issue.record("expected excessiveRefresh, got \(result)")
            return
        }
        #expect(response?.statusCode == 401)
        // The default window allows two refreshes: three attempts in all.
        #expect(authenticator.refreshes.value == 2)
        #expect(server.receivedRequests.count == 3)
    }

    @Test("Without a credential the request fails with missingCredential and is not sent")
    func missingCredential() async throws {
        let interceptor = AuthenticationInterceptor(authenticator: TestAuthenticator(newToken: "fresh"))
        let provider = MoyaProvider<Remote>(interceptors: [interceptor])
        let result = await send(provider, Remote(base, "/token/fresh"))
        guard case .underlying(let error, nil)? = result.error, case .missingCredential? = error as? AuthenticationError else {
            Issue.record("expected missingCredential, got \(result)")
            return
        }
        #expect(server.receivedRequests.isEmpty)
    }
}
