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
/// `NSURLErrorCancelled` `NSError` that every cancelled Moya request reports.
enum TransportError {
    /// The error every cancelled request reports.
    static var cancelled: NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled, userInfo: nil)
    }

    static func translate(_ error: any Error) -> any Error {
        if error is URLError { return error }
        if let clientError = error as? HTTPClientError {
            return translate(clientError: clientError)
        }
        if let connectionError = error as? NIOConnectionError {
            if connectionError.dnsAError != nil, connectionError.dnsAAAAError != nil, connectionError.connectionErrors.isEmpty {
                return urlError(.cannotFindHost, "The host \(connectionError.host) could not be found.", error)
            }
            return urlError(.cannotConnectToHost, "Could not connect to \(connectionError.host):\(connectionError.port).", error)
        }
        if let ioError = error as? IOError {
            switch ioError.errnoCode {
            case ECONNREFUSED: return urlError(.cannotConnectToHost, "Could not connect to the server.", error)
            case ECONNRESET, EPIPE: return urlError(.networkConnectionLost, "The network connection was lost.", error)
            default: return urlError(.unknown, "A network error occurred: \(ioError).", error)
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

    private static func translate(clientError: HTTPClientError) -> any Error {
        switch clientError {
        case .cancelled:
            return cancelled
        case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout,
             .tlsHandshakeTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return urlError(.timedOut, "The request timed out.", clientError)
        case .remoteConnectionClosed:
            return urlError(.networkConnectionLost, "The server closed the connection.", clientError)
        case .invalidURL, .emptyHost, .emptyScheme:
            return urlError(.badURL, "The URL is not valid for an HTTP request.", clientError)
        case .redirectLimitReached, .redirectCycleDetected:
            return urlError(.httpTooManyRedirects, "Too many redirects.", clientError)
        case .bodyLengthMismatch:
            return urlError(.networkConnectionLost, "The body length did not match the Content-Length.", clientError)
        default:
            if clientError.description.contains("unsupportedScheme") {
                return urlError(.unsupportedURL, "The URL's scheme is not supported.", clientError)
            }
            return urlError(.unknown, "The request failed: \(clientError).", clientError)
        }
    }

    private static func urlError(_ code: URLError.Code, _ description: String, _ underlying: any Error) -> URLError {
        URLError(code, userInfo: [NSLocalizedDescriptionKey: description, NSUnderlyingErrorKey: underlying])
    }
}
