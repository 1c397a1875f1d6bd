import Foundation

extension MoyaError {
    /// The error every cancelled request reports, whichever way it was cancelled (its token, a
    /// Swift task, a Combine subscription, or the transport itself): the `NSURLErrorCancelled`
    /// `NSError` in `NSURLErrorDomain`, as Moya reports it on Apple platforms. See
    /// ``isCancelled``.
    static var requestCancelled: MoyaError {
        .underlying(cancellation, nil)
    }

    /// The `NSError` under ``requestCancelled``, which says "The request was cancelled." (an
    /// `NSError` without a description says only "The operation could not be completed" on Linux).
    static var cancellation: NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled, userInfo: [NSLocalizedDescriptionKey: "The request was cancelled."])
    }
}
