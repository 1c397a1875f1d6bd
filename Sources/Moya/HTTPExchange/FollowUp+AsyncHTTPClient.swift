import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// What the follow-up decision needs of AsyncHTTPClient: its failures classified
/// (``FollowUp/Failure``) and its errors to end with (``FollowUp/Errors``). ``FollowUp`` itself
/// reads neither, so another transport can drive the same decision with its own.
extension FollowUp.Failure {
    /// The kind of `error`, an attempt's failure on AsyncHTTPClient.
    init(_ error: any Error) {
        if let clientError = error as? HTTPClientError {
            if clientError == .getConnectionFromPoolTimeout {
                self = .poolTimeout
            } else if clientError == .cancelled {
                self = .refused
            } else {
                self = .other
            }
        } else if (error as? ChannelError) == .ioOnClosedChannel {
            self = .unwritten
        } else if error is HTTPParserError {
            self = .unparsable
        } else {
            self = .other
        }
    }
}

extension FollowUp.Errors {
    /// AsyncHTTPClient's: the errors ``TransportError`` translates, and the one
    /// ``InFlightExchanges/isStoppedByShutdown(_:)`` recognises.
    static let asyncHTTPClient = FollowUp.Errors(
        cancelled: HTTPClientError.cancelled, redirectLimitReached: HTTPClientError.redirectLimitReached,
        redirectCycleDetected: HTTPClientError.redirectCycleDetected)
}
