import Foundation

/// One progress event of a request: how far it has come and, at the end, its response.
///
/// Each event carries its own `Progress` snapshot; reading an old event later still shows the
/// progress it had when it was sent.
public struct ProgressResponse: @unchecked Sendable {
    // Sendable: `Progress` is thread-safe, and Moya never mutates a snapshot after handing it out.

    /// The response, set on the last event of a successful request.
    public let response: Response?

    /// The progress snapshot of this event, if any.
    public let progressObject: Progress?

    /// Creates a progress event.
    ///
    /// - Parameters:
    ///   - progress: The progress snapshot.
    ///   - response: The response, for the final event.
    public init(progress: Progress? = nil, response: Response? = nil) {
        self.progressObject = progress
        self.response = response
    }

    /// The fraction completed, from 0 to 1: 1 once completed; 0 while the total is unknown.
    public var progress: Double {
        if completed {
            return 1.0
        } else if let progressObject = progressObject, progressObject.totalUnitCount > 0 {
            return min(1.0, progressObject.fractionCompleted)
        } else {
            return 0.0
        }
    }

    /// Whether the request has completed with a response.
    public var completed: Bool {
        response != nil
    }
}
