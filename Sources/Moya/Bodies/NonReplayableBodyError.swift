import Foundation

/// A request needed to send its body again, but the body is a one-shot stream that cannot be
/// rewound: a `URLRequest`'s `httpBodyStream`, an `InputStream` part of a multipart form, or a
/// ``RequestBodyStream`` that can be iterated once only.
///
/// Delivered as ``MoyaError/underlying(_:_:)``, with the response that asked for the body again
/// when there is one (the `503` a retry policy would have retried, say). To let redirects and
/// retries resend a body, give one that can be read again: `Data`, a file (``Task/uploadFile(_:)``),
/// or a ``RequestBodyStream`` whose ``RequestBodyStream/iteration`` is
/// ``RequestBodyStream/Iteration/multiple``.
public struct NonReplayableBodyError: Error, LocalizedError, CustomStringConvertible, Sendable {
    /// What needed the body again.
    public enum Reason: Sendable, Equatable {
        /// A redirect that keeps the method and the body (`307`, `308`), to `location`.
        case redirect(statusCode: Int, location: URL)
        /// An interceptor asked to retry the request.
        case retry
        /// The body was already sent, or being sent, by another request or attempt.
        case alreadySent
    }

    /// What needed the body again.
    public let reason: Reason

    /// For a retry of an attempt that failed (the connection was lost, say), how it failed. A
    /// retry asked for because of a response has none: the response comes with the
    /// ``MoyaError``.
    public let attemptFailure: MoyaError?

    /// An error for `reason`.
    ///
    /// - Parameters:
    ///   - reason:         What needed the body again.
    ///   - attemptFailure: For a retry of an attempt that failed, how it failed.
    public init(reason: Reason, attemptFailure: MoyaError? = nil) {
        self.reason = reason
        self.attemptFailure = attemptFailure
    }

    /// A description of the problem.
    public var errorDescription: String? {
        let what: String
        switch reason {
        case .redirect(let statusCode, let location):
            what = "so it cannot be sent again for the \(statusCode) redirect to \(location.absoluteString)"
        case .retry:
            let failure = attemptFailure.map { failure -> String in
                let text = ErrorText.describe(failure)
                return " (the attempt failed: \(text.hasSuffix(".") ? String(text.dropLast()) : text))"
            }
            what = "so it cannot be sent again for a retry" + (failure ?? "")
        case .alreadySent:
            what = "and it was already sent by another request or attempt"
        }
        return "The request body is a one-shot stream that cannot be rewound, \(what). "
            + "Send Data, a file, or a RequestBodyStream whose iteration is .multiple to allow that."
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "The request body is a one-shot stream that cannot be rewound." }
}
