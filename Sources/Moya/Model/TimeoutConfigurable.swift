import Foundation

/// A target with its own time limit, which wins over the session's.
///
/// ```swift
/// extension MyAPI: TimeoutConfigurable {
///     var timeoutInterval: TimeInterval? {
///         self == .report ? 300 : nil
///     }
/// }
/// ```
///
/// The limit covers the whole request (waiting for a free connection, connecting, sending and
/// receiving), like
/// ``Session/Configuration/timeoutIntervalForResource``: the request fails with
/// `URLError(.timedOut)` when it runs out. The provider stores it in the request's
/// `URLRequest.timeoutInterval`, which plugins see and may change. The transport honours any
/// `timeoutInterval` except Foundation's default of 60 seconds, which means "no limit of the
/// request's own", so a target cannot ask for exactly 60 seconds (use 59 or 61).
public protocol TimeoutConfigurable {
    /// How many seconds the request may take, or `nil` for the session's limits.
    var timeoutInterval: TimeInterval? { get }
}
