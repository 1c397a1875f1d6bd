import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The seed documents' authentication examples, against the in-process server.
@Suite("Seed authentication examples")
struct SeedAuthenticationTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.start()
    }

    private var endpoints: (YourAPI) -> Endpoint {
        rewritingEndpoints([
            ("https://api.yourapi.com/anything", server.baseURL.absoluteString + "/echo"),
            ("https://api.yourapi.com", server.baseURL.absoluteString),
        ])
    }

    @Test("CredentialsPlugin for every request")
    func credentialsForEveryRequest() async throws {
        // As in the seed:
        let provider = MoyaProvider<YourAPI>(
            endpointClosure: endpoints,
            plugins: [
                CredentialsPlugin { _ -> URLCredential? in
                    return URLCredential(user: "user", password: "passwd", persistence: .none)
                }
            ])
        let response = try await send(provider, .targetThatNeedsAuthentication).get()
        #expect(response.statusCode == 200)
    }

    @Test("CredentialsPlugin per target")
    func credentialsPerTarget() async throws {
        // As in the seed:
        let provider = MoyaProvider<YourAPI>(
            endpointClosure: endpoints,
            plugins: [
                CredentialsPlugin { target -> URLCredential? in
                    switch target {
                    case YourAPI.targetThatNeedsAuthentication:
                        return URLCredential(user: "user", password: "passwd", persistence: .none)
                    default:
                        return nil
                    }
                }
            ])
        #expect(try await send(provider, .targetThatNeedsAuthentication).get().statusCode == 200)
        let open = try await send(provider, .targetDoesNotNeedAuth).get()
        #expect(try echo(of: .success(open)).headers["authorization"] == nil)
        #expect(server.receivedRequests.count == 3)
    }

    @Test("AccessTokenPlugin with a target-independent token, bearer and basic")
    func accessToken() async throws {
        // As in the seed:
        let token = "eyeAm.AJsoN.weBTOKen"
        let authPlugin = AccessTokenPlugin { token }
        let provider = MoyaProvider<YourAPI>(endpointClosure: endpoints, plugins: [authPlugin])

        let bearer = try await send(provider, .targetThatNeedsBearerAuth).get()
        #expect(bearer.statusCode == 200)
        #expect(server.receivedRequests.last?.header("Authorization") == "Bearer eyeAm.AJsoN.weBTOKen")
        let basic = try echo(of: await send(provider, .targetThatNeedsBasicAuth))
        #expect(basic.headers["authorization"] == "Basic eyeAm.AJsoN.weBTOKen")
        let open = try echo(of: await send(provider, .targetDoesNotNeedAuth))
        #expect(open.headers["authorization"] == nil)
    }

    @Test("An asynchronous requestClosure signs the request (OAuth)")
    func asyncRequestClosure() async throws {
        // As in the seed, with Moya 15's `try endpoint.urlRequest()` (the seed reads a property
        // that is a throwing method) and `@escaping` (`done` is called later).
        let requestClosure = { (endpoint: Endpoint, done: @escaping MoyaProvider.RequestResultClosure) in
            let request = try! endpoint.urlRequest()  // This is the request Moya generates
            YourAwesomeOAuthProvider.signRequest(
                request,
                completion: { signedRequest in
                    // The OAuth provider can make its own network calls to sign your request.
                    // However, you *must* call `done()` with the signed so that Moya can
                    // actually send it!
                    done(.success(signedRequest))
                })
        }
        let provider = MoyaProvider<YourAPI>(endpointClosure: endpoints, requestClosure: requestClosure)
        let signed = try echo(of: await send(provider, .targetDoesNotNeedAuth))
        #expect(signed.headers["authorization"] == #"OAuth oauth_signature="signed""#)
    }

    @Test("The seed's endpointClosure signs all non-authenticating requests")
    func endpointClosureSigning() async throws {
        let endpoints = self.endpoints
        let endpointClosure = { (target: YourAPI) -> Endpoint in
            let defaultEndpoint = endpoints(target)

            // Sign all non-authenticating requests
            switch target {
            case .targetThatNeedsAuthentication:
                return defaultEndpoint
            default:
                return defaultEndpoint.adding(newHTTPHeaderFields: ["AUTHENTICATION_TOKEN": "t0k3n"])
            }
        }
        let provider = MoyaProvider<YourAPI>(endpointClosure: endpointClosure)
        #expect(try echo(of: await send(provider, .targetDoesNotNeedAuth)).headers["authentication_token"] == "t0k3n")
    }
}
