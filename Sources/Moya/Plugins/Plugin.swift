import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin is told about every request a provider makes and can change it and its result.
///
/// The provider calls the hooks in this order, for real and stubbed requests alike:
/// ``prepare(_:target:)`` (each plugin in turn, chained), ``willSend(_:target:)``,
/// then, when the result is known, ``didReceive(_:target:)`` and ``process(_:target:)``
/// (chained) just before the completion. Every hook has a default that does nothing.
public protocol PluginType {
    /// Returns the request to send, for example with an added header.
    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest

    /// Called just before the request is sent (or stubbed).
    func willSend(_ request: RequestType, target: TargetType)

    /// Called when a ``RequestInterceptor`` sends the request again: `result` is the outcome of
    /// the attempt that is being retried (a raw response, not validated yet, or a transport
    /// error), `attempt` the number of the attempt about to start (2 for the first retry).
    /// ``willSend(_:target:)`` and ``didReceive(_:target:)`` run once per request, around all
    /// attempts.
    func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType)

    /// Called when the result arrives, before the completion.
    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType)

    /// Returns the result the completion will get; can replace it.
    func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError>
}

extension PluginType {
    /// Returns `request` unchanged.
    public func prepare(_ request: URLRequest, target: TargetType) -> URLRequest { request }

    /// Does nothing.
    public func willSend(_ request: RequestType, target: TargetType) {}

    /// Does nothing.
    public func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType) {}

    /// Does nothing.
    public func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {}

    /// Returns `result` unchanged.
    public func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> { result }
}

/// The request as plugins see it in ``PluginType/willSend(_:target:)``, without any transport types.
public protocol RequestType {
    /// The request about to be sent, after every plugin's ``PluginType/prepare(_:target:)``.
    var request: URLRequest? { get }

    /// The headers the session adds to every request (a request's own headers win).
    var sessionHeaders: [String: String] { get }

    /// Answers an HTTP Basic challenge from the server with these credentials.
    func authenticate(username: String, password: String, persistence: URLCredential.Persistence) -> Self

    /// Answers an HTTP Basic challenge from the server with this credential.
    func authenticate(with credential: URLCredential) -> Self

    /// Calls `handler` with a cURL command that reproduces the request.
    func cURLDescription(calling handler: @escaping (String) -> Void) -> Self
}
