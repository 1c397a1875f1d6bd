import Foundation

/// Whether a request has started or finished.
public enum NetworkActivityChangeType: Equatable, Sendable {
    /// A request is about to be sent (or stubbed).
    case began

    /// A request has finished, failed or been cancelled.
    case ended
}

/// Tells a closure when requests begin and end, for example to show a network activity
/// indicator while any request is running.
///
/// ```swift
/// let plugin = NetworkActivityPlugin { change, target in
///     switch change {
///     case .began: print("started", target.path)
///     case .ended: print("finished", target.path)
///     }
/// }
/// ```
///
/// `.began` comes from ``PluginType/willSend(_:target:)`` and `.ended` from
/// ``PluginType/didReceive(_:target:)``, for real and stubbed requests alike, on the threads
/// those hooks run on. A request cancelled before it was sent reports `.ended` without
/// `.began`, and a request whose `requestClosure` failed reports neither, as in Moya.
public final class NetworkActivityPlugin: PluginType {
    /// Receives each change and the target it concerns.
    public typealias NetworkActivityClosure = (_ change: NetworkActivityChangeType, _ target: TargetType) -> Void

    let networkActivityClosure: NetworkActivityClosure

    /// Creates a plugin that reports to `networkActivityClosure`.
    ///
    /// - Parameter networkActivityClosure: Called with `.began` and `.ended` for every request.
    public init(networkActivityClosure: @escaping NetworkActivityClosure) {
        self.networkActivityClosure = networkActivityClosure
    }

    /// Reports `.began`.
    ///
    /// - Parameters:
    ///   - request: The request about to be sent.
    ///   - target:  Its target.
    public func willSend(_ request: RequestType, target: TargetType) {
        networkActivityClosure(.began, target)
    }

    /// Reports `.ended`.
    ///
    /// - Parameters:
    ///   - result: The request's result.
    ///   - target: Its target.
    public func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        networkActivityClosure(.ended, target)
    }
}
