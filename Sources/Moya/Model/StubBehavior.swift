import Foundation

/// Whether and how a provider stubs a target instead of sending it.
public enum StubBehavior: Sendable, Equatable {
    /// Do not stub: send a real request.
    case never

    /// Return the sample response immediately.
    case immediate

    /// Return the sample response after a delay in seconds.
    case delayed(seconds: TimeInterval)
}
