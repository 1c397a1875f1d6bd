import Foundation

/// What a ``MockServer`` throws.
public enum MockServerError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// ``MockServer/waitForRequests(count:timeout:)`` gave up: `received` of the `waitingFor`
    /// requests had arrived after `after`.
    case timedOut(waitingFor: Int, received: Int, after: Duration)
    /// The server's ``MockServer/Configuration`` cannot be used; the text says why.
    case invalidConfiguration(String)
    /// The listening socket has no local address (it was closed as it was bound).
    case noLocalAddress

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .timedOut(let wanted, let received, let after):
            return "MockServer: waited \(after) for \(wanted) request(s), but \(received) arrived"
        case .invalidConfiguration(let reason):
            return "MockServer: invalid configuration: \(reason)"
        case .noLocalAddress:
            return "MockServer: the listening socket has no local address"
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
