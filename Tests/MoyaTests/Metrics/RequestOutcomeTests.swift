import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The low-cardinality values the request metrics use, worked out without a network.
@Suite("Request metrics: method and error names")
struct RequestOutcomeTests {
    @Test("Methods OpenTelemetry knows keep their name; any other is _OTHER")
    func methodNames() {
        for method in ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "CONNECT", "TRACE", "QUERY"] {
            #expect(RequestMetrics.methodName(method) == method)
        }
        for method in ["get", "PROPFIND", "X-CUSTOM", ""] {
            #expect(RequestMetrics.methodName(method) == "_OTHER")
        }
    }

    @Test("Errors are named from a short list, or by their type")
    func errorTypes() {
        struct TokenError: Error {}
        let cases: [(any Error, String)] = [
            (MoyaError.requestCancelled, "cancelled"),
            (MoyaError.underlying(URLError(.timedOut), nil), "timeout"),
            (URLError(.cannotConnectToHost), "cannot_connect"),
            (URLError(.cannotFindHost), "host_not_found"),
            (URLError(.networkConnectionLost), "connection_lost"),
            (URLError(.secureConnectionFailed), "tls"),
            (URLError(.httpTooManyRedirects), "too_many_redirects"),
            (URLError(.cannotDecodeContentData), "decoding_failed"),
            (URLError(.callIsActive), "_OTHER"),
            (TLSError.serverTrustEvaluationFailed(host: "example.com", reason: "expired"), "tls"),
            (SessionError.responseBodyTooLarge(limit: 10, announcedLength: nil), "response_too_large"),
            (SessionError.shutDown, "session_shut_down"),
            (SessionError.shuttingDown, "session_shut_down"),
            (SessionError.stoppedByShutdown, "session_shut_down"),
            (RequestValidationError.invalidPort(0), "invalid_request"),
            (MultipartEncodingError.emptyForm, "invalid_request"),
            (MoyaError.requestMapping("x"), "invalid_request"),
            (TokenError(), String(reflecting: TokenError.self)),
        ]
        for (error, name) in cases {
            #expect(RequestOutcome.errorType(of: error) == name, "\(error)")
        }
    }

    @Test("A response of 400 or more is an error even when the validation accepts it")
    func statusOutcomes() {
        let request = URLRequest(url: URL(string: "http://example.com")!)
        let ok = Moya.Response(statusCode: 204, data: Data(), request: request)
        let missing = Moya.Response(statusCode: 404, data: Data("no".utf8), request: request)
        #expect(RequestOutcome(.success(ok)).errorType == nil)
        #expect(RequestOutcome(.success(ok)).statusCode == 204)
        #expect(RequestOutcome(.success(missing)).errorType == "404")
        #expect(RequestOutcome(.failure(.statusCode(ok))).errorType == "204")
        #expect(RequestOutcome(.failure(.requestCancelled)).statusCode == nil)
        #expect(RequestOutcome(.failure(.underlying(URLError(.timedOut), missing))).statusCode == 404)
    }
}
