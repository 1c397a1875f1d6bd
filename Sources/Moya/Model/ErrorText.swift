import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The words for an error of any type: what a ``MoyaError`` that wraps it says, and what Moya's
/// own errors say of the error that caused them.
///
/// On Linux, Foundation's `localizedDescription` of most errors says nothing but "The operation
/// could not be completed": a `URLError` or `NSError` without a description (such as the
/// cancellation error of every cancelled request), a `POSIXError`, a `CocoaError`, a Swift error
/// that is not a `LocalizedError`. This reads the description the error carries, and otherwise
/// makes one from its type, domain and code.
enum ErrorText {
    /// A sentence saying what `error` is:
    ///
    /// 1. a `LocalizedError`'s `errorDescription`, or the `NSLocalizedDescriptionKey` of its user info;
    /// 2. for an error in `NSURLErrorDomain`, a sentence for its code ("The request timed out.");
    /// 3. for a `POSIXError`, the system's message and the `errno`;
    /// 4. the failure reason Foundation has for the error (a `CocoaError`'s);
    /// 5. the `description` of a Swift error that has one (not Foundation's `NSError` text);
    /// 6. otherwise the error's domain (or type) and code, as Foundation names them: "(Test error 7.)".
    static func describe(_ error: any Error) -> String {
        if let localized = error as? LocalizedError, let text = localized.errorDescription, !text.isEmpty {
            return text
        }
        if error is CancellationError {
            return "The task was cancelled."
        }
        let nsError = error as NSError
        if let text = nsError.userInfo[NSLocalizedDescriptionKey] as? String, !text.isEmpty {
            return text
        }
        if nsError.domain == NSURLErrorDomain {
            return urlLoadingSentence(code: nsError.code)
        }
        if nsError.domain == NSPOSIXErrorDomain {
            return "\(systemMessage(errno: nsError.code)) (errno \(nsError.code))."
        }
        if let reason = nsError.localizedFailureReason, !reason.isEmpty {
            return sentence(reason)
        }
        // Foundation's error structs (`CocoaError`) describe themselves as an `NSError` does.
        let isNSError = type(of: error) is NSError.Type || nsError.domain == NSCocoaErrorDomain
        // Cast from `Any`: the compiler takes a cast of `any Error` as one through `NSError`.
        let value: Any = error
        if !isNSError, let described = value as? any CustomStringConvertible {
            let text = described.description
            if !text.isEmpty { return text }
        }
        // As Foundation names it, after the placeholder: "(Test error 7.)".
        let name = isNSError ? nsError.domain : String(describing: type(of: error))
        return "An error occurred that has no description (\(name) error \(nsError.code).)"
    }

    /// The system's message for an `errno` value, such as "Connection refused".
    static func systemMessage(errno code: Int) -> String {
        strerror(Int32(truncatingIfNeeded: code)).map { String(cString: $0) } ?? "System error"
    }

    /// `text` ending with a full stop.
    private static func sentence(_ text: String) -> String {
        text.hasSuffix(".") ? text : text + "."
    }

    /// What an error in `NSURLErrorDomain` means, for the codes that reach Moya's users: the
    /// transport's own, and those of stubs' `.networkError`s.
    private static func urlLoadingSentence(code: Int) -> String {
        switch code {
        case NSURLErrorCancelled: return "The request was cancelled."
        case NSURLErrorTimedOut: return "The request timed out."
        case NSURLErrorBadURL: return "The URL is not valid."
        case NSURLErrorUnsupportedURL: return "The URL is not supported."
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return "The server's host name could not be found."
        case NSURLErrorCannotConnectToHost: return "Could not connect to the server."
        case NSURLErrorNetworkConnectionLost: return "The network connection was lost."
        case NSURLErrorNotConnectedToInternet: return "There is no network connection."
        case NSURLErrorHTTPTooManyRedirects: return "There were too many redirects."
        case NSURLErrorBadServerResponse: return "The server's response was not valid."
        case NSURLErrorZeroByteResource: return "The server's response was empty."
        case NSURLErrorCannotDecodeRawData, NSURLErrorCannotDecodeContentData: return "The server's response could not be decoded."
        case NSURLErrorCannotParseResponse: return "The server's response could not be parsed."
        case NSURLErrorUserAuthenticationRequired, NSURLErrorUserCancelledAuthentication: return "The server requires authentication."
        case NSURLErrorSecureConnectionFailed: return "A secure connection to the server could not be made."
        case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateHasBadDate,
            NSURLErrorServerCertificateNotYetValid:
            return "The server's certificate is not trusted."
        case NSURLErrorResourceUnavailable: return "The resource is not available."
        case NSURLErrorFileDoesNotExist: return "The file does not exist."
        default: return "The URL request failed (NSURLErrorDomain code \(code))."
        }
    }
}
