import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Translates transport failures into the errors Foundation users know: `URLError`s with the
/// original error under `NSUnderlyingErrorKey`, and, for cancellation, the
/// `NSURLErrorCancelled` `NSError` that every cancelled Moya request reports
/// (``MoyaError/requestCancelled``).
enum TransportError {
    static func translate(_ error: any Error) -> any Error {
        if error is URLError { return error }
        if let interrupted = error as? InterruptedDownload {
            return attaching(resumeData: interrupted.resume.encoded(), to: translate(interrupted.underlying))
        }
        if let clientError = error as? HTTPClientError {
            return translate(clientError: clientError)
        }
        if let connectionError = error as? NIOConnectionError {
            if connectionError.dnsAError != nil, connectionError.dnsAAAAError != nil, connectionError.connectionErrors.isEmpty {
                return urlError(.cannotFindHost, "The host \(connectionError.host) could not be found.", error)
            }
            // Usually named for its endpoint already by `ExchangeParts.explainingFailure`.
            return connectionFailure(connectionError, endpoint: nil) ?? error
        }
        if let ioError = error as? IOError {
            let systemReason = "\(ErrorText.systemMessage(errno: Int(ioError.errnoCode))) (errno \(ioError.errnoCode))."
            switch ioError.errnoCode {
            case ECONNREFUSED: return connectionFailure(ioError, endpoint: nil) ?? error
            case ECONNRESET, EPIPE: return urlError(.networkConnectionLost, "The network connection was lost.", reason: systemReason, error)
            default: return urlError(.unknown, "A network error occurred: \(systemReason)", reason: systemReason, error)
            }
        }
        if error is ChannelError {
            return urlError(.networkConnectionLost, "The network connection was lost.", error)
        }
        if let parserError = error as? HTTPParserError, parserError == .invalidEOFState {
            return urlError(.networkConnectionLost, "The connection closed before the whole response arrived.", error)
        }
        if error is HTTPParserError {
            return urlError(.badServerResponse, "The server sent a malformed HTTP response.", error)
        }
        if error is NIOHTTPDecompression.DecompressionError {
            return urlError(.cannotDecodeContentData, "The response body could not be decompressed.", error)
        }
        return error
    }

    /// AsyncHTTPClient's errors, told apart by value (`HTTPClientError` is `Equatable`). The few
    /// that carry a value (an unsupported scheme, invalid header fields) cannot be matched that
    /// way; ``ExchangeParts/explainingFailure(_:of:)`` finds their cause in the request before they
    /// get here.
    /// `error` with a download's resume data in its `userInfo`, under
    /// ``MoyaError/resumeDataKey`` (where ``MoyaError/resumeData`` finds it).
    private static func attaching(resumeData: Data, to error: any Error) -> any Error {
        if let urlError = error as? URLError {
            var userInfo = urlError.userInfo
            userInfo[MoyaError.resumeDataKey] = resumeData
            return URLError(urlError.code, userInfo: userInfo)
        }
        let nsError = error as NSError
        var userInfo = nsError.userInfo
        userInfo[MoyaError.resumeDataKey] = resumeData
        if userInfo[NSUnderlyingErrorKey] == nil {
            userInfo[NSUnderlyingErrorKey] = nsError
        }
        return NSError(domain: nsError.domain, code: nsError.code, userInfo: userInfo)
    }

    private static func translate(clientError: HTTPClientError) -> any Error {
        switch clientError {
        case .cancelled:
            return MoyaError.cancellation
        case .alreadyShutdown:
            return SessionError.shutDown
        case .connectTimeout:
            return urlError(.timedOut, "The connection to the server could not be established in time.", clientError)
        case .readTimeout:
            return urlError(.timedOut, "The request timed out waiting for the server's response.", clientError)
        case .writeTimeout:
            return urlError(.timedOut, "The request timed out sending the request.", clientError)
        case .deadlineExceeded:
            return urlError(.timedOut, "The request did not complete in the time it was given.", clientError)
        case .getConnectionFromPoolTimeout:
            return urlError(.timedOut, "The request timed out waiting for a connection from the session's pool.", clientError)
        case .tlsHandshakeTimeout:
            return urlError(.timedOut, "The request timed out in the TLS handshake.", clientError)
        case .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return urlError(.timedOut, "The request timed out connecting through the proxy.", clientError)
        case .remoteConnectionClosed:
            return urlError(.networkConnectionLost, "The server closed the connection.", clientError)
        case .uncleanShutdown:
            return urlError(.networkConnectionLost, "The server closed the TLS connection without a proper shutdown.", clientError)
        case .requestStreamCancelled:
            return urlError(.networkConnectionLost, "The server answered before the whole request body was sent, so the rest was not sent.", clientError)
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath:
            return urlError(.badURL, "The URL is not valid for an HTTP request.", clientError)
        case .redirectLimitReached:
            return urlError(.httpTooManyRedirects, "Too many redirects.", clientError)
        case .redirectCycleDetected:
            return urlError(.httpTooManyRedirects, "The redirects lead back to a URL already visited.", clientError)
        case .bodyLengthMismatch:
            return urlError(.networkConnectionLost, "The body length did not match the Content-Length.", clientError)
        case .traceRequestWithBody:
            return RequestValidationError.bodyInTRACERequest
        case .proxyAuthenticationRequired:
            return urlError(.userAuthenticationRequired, "The proxy requires authentication (407 Proxy Authentication Required).", clientError)
        case .invalidProxyResponse:
            return urlError(.cannotConnectToHost, "The proxy refused to open a tunnel to the server, or answered with an invalid response.", clientError)
        case .invalidProxyConfiguration, .invalidLocalAddress, .invalidDNSOverridesConfiguration,
            .invalidHTTPVersionConfiguration, .invalidRedirectConfiguration:
            return urlError(.unknown, "The session's configuration is not valid: \(clientError.shortDescription).", clientError)
        default:
            return urlError(.unknown, "The request failed: \(clientError).", clientError)
        }
    }

    private static func urlError(_ code: URLError.Code, _ description: String, _ underlying: any Error) -> URLError {
        URLError(code, userInfo: [NSLocalizedDescriptionKey: description, NSUnderlyingErrorKey: underlying])
    }
}
