import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session with a `ServerTrustManager` follows redirects itself, so that each hop is judged
/// by its own host's evaluator. These tests check that it follows them as AsyncHTTPClient did.
@Suite("HTTPS: redirects on a session with a ServerTrustManager")
struct TrustManagerRedirectTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start(tls: true)
    }

    func request(
        _ target: Remote, evaluators: [String: any ServerTrustEvaluating]? = nil,
        redirectPolicy: Session.Configuration.RedirectPolicy = .follow(max: 10, allowCycles: false)
    ) async throws -> Result<Moya.Response, MoyaError> {
        let manager = ServerTrustManager(evaluators: evaluators ?? ["127.0.0.1": DisabledTrustEvaluator()])
        let session = Session(configuration: .init(redirectPolicy: redirectPolicy, serverTrustManager: manager))
        let result = await send(MoyaProvider<Remote>(session: session), target)
        try await session.shutdown()
        return result
    }

    func redirectTo(_ url: String, status: Int, method: Moya.Method = .get, body: String? = nil) -> Remote {
        let parameters: [String: Any] = ["url": url, "status": status]
        let task: Moya.Task =
            body.map { .requestCompositeData(bodyData: Data($0.utf8), urlParameters: parameters) }
            ?? .requestParameters(parameters: parameters, encoding: URLEncoding.queryString)
        return Remote(base, "/redirect-to", method: method, task: task)
    }

    @Test("303 turns a POST into a GET without body; 307 keeps method and body")
    func methodAndBody() async throws {
        let seeOther = try echo(of: try await request(redirectTo("/echo", status: 303, method: .post, body: "payload")))
        #expect(seeOther.method == "GET")
        #expect(seeOther.bodyLength == 0)
        let temporary = try echo(of: try await request(redirectTo("/echo", status: 307, method: .post, body: "payload")))
        #expect(temporary.method == "POST")
        #expect(temporary.body == "payload")
    }

    @Test("A redirect loop fails with httpTooManyRedirects, and the limit is honoured")
    func loopsAndLimit() async throws {
        let loop = try await request(Remote(base, "/redirect-loop"))
        guard case .underlying(let error as URLError, _)? = loop.error else {
            Issue.record("expected a URLError, got \(loop)")
            return
        }
        #expect(error.code == .httpTooManyRedirects)

        server.resetRecordedRequests()
        let limited = try await request(Remote(base, "/redirect/5"), redirectPolicy: .follow(max: 3, allowCycles: false))
        #expect((limited.error?.underlyingError as? URLError)?.code == .httpTooManyRedirects)
        #expect(server.receivedRequests.count == 4)

        let enough = try await request(Remote(base, "/redirect/2"), redirectPolicy: .follow(max: 3, allowCycles: false))
        #expect(try echo(of: enough).path == "/echo")
    }

    @Test("With redirects disallowed, the redirect response is the result")
    func disallowed() async throws {
        let result = try await request(Remote(base, "/redirect/1"), redirectPolicy: .disallow)
        #expect(result.response?.statusCode == 302)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("A redirect to a host pinned by certificate is checked against that host's pins")
    func certificatePinsSurviveRedirects() async throws {
        let target = redirectTo(base.appendingPathComponent("echo").absoluteString, status: 302)
        let viaLocalhost = Remote(URL(string: "https://localhost:\(server.port)")!, target.path, task: target.task)
        let wrongPin = PinnedCertificatesTrustEvaluator(certificates: [try ServerTrustTests.otherCertificate()])
        let result = try await request(viaLocalhost, evaluators: ["localhost": DisabledTrustEvaluator(), "127.0.0.1": wrongPin])
        guard case .underlying(let error, nil)? = result.error, case .serverTrustEvaluationFailed("127.0.0.1", _)? = error as? TLSError else {
            Issue.record("expected a trust failure for 127.0.0.1, got \(result)")
            return
        }
        #expect(server.receivedRequests.map(\.path) == ["/redirect-to"])
    }

    @Test("A redirect to a host without an evaluator is refused when every host must be evaluated")
    func unevaluatedRedirectTarget() async throws {
        let target = redirectTo("https://localhost:\(server.port)/echo", status: 302)
        let result = try await request(target)
        guard case .underlying(let error, nil)? = result.error, case .noEvaluatorFound("localhost")? = error as? TLSError else {
            Issue.record("expected noEvaluatorFound, got \(result)")
            return
        }
        #expect(server.receivedRequests.map(\.path) == ["/redirect-to"])
    }
}
