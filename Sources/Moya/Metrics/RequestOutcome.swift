import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the metrics of a finished request say about its result: the response, if there was
/// one, and `error.type`, a name from a short, fixed list, so that errors cannot make series
/// without end.
///
/// `error.type` is, as OpenTelemetry has it for HTTP clients:
/// - the status code (`"404"`, `"503"`) of a response whose status is 400 or more, or that the
///   target's ``ValidationType`` rejected;
/// - `cancelled` for a cancelled request;
/// - for a request that got no response, what went wrong: `timeout`, `host_not_found`,
///   `cannot_connect`, `connection_lost`, `not_connected`, `tls`, `bad_response`,
///   `decoding_failed`, `too_many_redirects`, `bad_url`, `unsupported_url`,
///   `authentication_required`, `response_too_large`, `session_shut_down`, `not_cached` (a
///   cache-only request found nothing in the cache) or `invalid_request`
///   (the request could not be sent as it was: a bad port, method or header, a body in a `GET`,
///   a missing upload file, an empty multipart form);
/// - `_OTHER` for any other `URLError`, and the type name (`MyApp.TokenError`) of any other
///   error, such as one thrown by an interceptor or given to a stub.
struct RequestOutcome {
    /// The response, when the request got one.
    let response: Moya.Response?
    /// `error.type`, or `nil` for a success.
    let errorType: String?

    /// The response's status code.
    var statusCode: Int? { response?.statusCode }

    init(_ result: Result<Moya.Response, MoyaError>) {
        switch result {
        case .success(let response):
            self.response = response
            self.errorType = response.statusCode >= 400 ? String(response.statusCode) : nil
        case .failure(let error):
            self.response = error.response
            self.errorType = Self.errorType(of: error)
        }
    }

    /// `error.type` for a request that failed with `error`.
    static func errorType(of error: any Error) -> String {
        switch error {
        case let error as MoyaError:
            switch error {
            case .underlying(let underlying, _): return errorType(of: underlying)
            case .statusCode(let response): return String(response.statusCode)
            case .requestMapping, .parameterEncoding, .encodableMapping: return "invalid_request"
            case .imageMapping, .jsonMapping, .stringMapping, .objectMapping: return "_OTHER"
            }
        case let error as URLError:
            return name(ofCode: error.code.rawValue)
        case let error as SessionError:
            switch error {
            case .responseBodyTooLarge: return "response_too_large"
            case .informationalResponse: return "bad_response"
            case .shutDown, .shuttingDown, .stoppedByShutdown: return "session_shut_down"
            case .notCached: return "not_cached"
            }
        case is TLSError:
            return "tls"
        case is RequestValidationError, is FileTransferError, is MultipartEncodingError, is ParameterEncodingError:
            return "invalid_request"
        default:
            // The cancellation error is an `NSError` in `NSURLErrorDomain`, as are URL errors
            // made by hand.
            let nsError = error as NSError
            if nsError.domain == NSURLErrorDomain {
                return name(ofCode: nsError.code)
            }
            return String(reflecting: type(of: error))
        }
    }

    /// The name of a `URLError` code (its raw value: `URLError.Code(rawValue:)` is failable on
    /// Linux only), or `_OTHER`.
    private static func name(ofCode code: Int) -> String {
        switch code {
        case URLError.Code.cancelled.rawValue: return "cancelled"
        case URLError.Code.timedOut.rawValue: return "timeout"
        case URLError.Code.cannotFindHost.rawValue, URLError.Code.dnsLookupFailed.rawValue: return "host_not_found"
        case URLError.Code.cannotConnectToHost.rawValue: return "cannot_connect"
        case URLError.Code.networkConnectionLost.rawValue: return "connection_lost"
        case URLError.Code.notConnectedToInternet.rawValue: return "not_connected"
        case URLError.Code.secureConnectionFailed.rawValue, URLError.Code.serverCertificateUntrusted.rawValue,
            URLError.Code.serverCertificateHasBadDate.rawValue, URLError.Code.serverCertificateNotYetValid.rawValue,
            URLError.Code.serverCertificateHasUnknownRoot.rawValue, URLError.Code.clientCertificateRejected.rawValue,
            URLError.Code.clientCertificateRequired.rawValue:
            return "tls"
        case URLError.Code.badServerResponse.rawValue, URLError.Code.zeroByteResource.rawValue: return "bad_response"
        case URLError.Code.cannotDecodeContentData.rawValue, URLError.Code.cannotDecodeRawData.rawValue, URLError.Code.cannotParseResponse.rawValue:
            return "decoding_failed"
        case URLError.Code.httpTooManyRedirects.rawValue, URLError.Code.redirectToNonExistentLocation.rawValue: return "too_many_redirects"
        case URLError.Code.badURL.rawValue: return "bad_url"
        case URLError.Code.unsupportedURL.rawValue: return "unsupported_url"
        case URLError.Code.userAuthenticationRequired.rawValue, URLError.Code.userCancelledAuthentication.rawValue: return "authentication_required"
        case URLError.Code.dataLengthExceedsMaximum.rawValue: return "response_too_large"
        default: return "_OTHER"
        }
    }
}
