import Foundation

/// Describes one API call: where it goes, how it is sent, and what a stub returns.
///
/// Users usually conform an `enum` with one case per call:
///
/// ```swift
/// enum GitHub: TargetType {
///     case zen
///     var baseURL: URL { URL(string: "https://api.github.com")! }
///     var path: String { "/zen" }
///     var method: Moya.Method { .get }
///     var task: Task { .requestPlain }
///     var headers: [String: String]? { nil }
/// }
/// ```
///
/// Targets travel with their requests to the callback queue, so a target type's conformance
/// must not be isolated to an actor (`SendableMetatype`); any plain `enum` or `struct` qualifies.
public protocol TargetType: SendableMetatype {
    /// The target's base URL; ``path`` is appended to it.
    var baseURL: URL { get }

    /// The path appended to ``baseURL`` to form the full URL (see `URL(target:)`).
    var path: String { get }

    /// The HTTP method of the request.
    var method: Moya.Method { get }

    /// The data returned by stubs for this target. Defaults to empty data.
    var sampleData: Data { get }

    /// What to send: the body, parameters, upload or download of the request.
    var task: Task { get }

    /// Which status codes count as a success. Defaults to ``ValidationType/none``.
    var validationType: ValidationType { get }

    /// The HTTP headers sent with the request.
    var headers: [String: String]? { get }
}

extension TargetType {
    /// No validation by default.
    public var validationType: ValidationType { .none }

    /// Empty sample data by default.
    public var sampleData: Data { Data() }
}
