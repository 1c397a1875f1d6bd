import Foundation

/// A target that names the operation it stands for, in the request's metrics and client span.
///
/// Moya names a target by its enum case (`userProfile` for `.userProfile("ann")`) or, for any
/// other type, by the type's name, which says nothing when one type stands for many operations
/// (a target made at run time, or ``MultiTarget`` around such a type). Such a target adopts this
/// protocol and names each request itself:
///
/// ```swift
/// struct Operation: TargetType, NamedTarget {
///     let name: String
///     let baseURL: URL
///     let path: String
///     var method: Moya.Method { .get }
///     var task: Moya.Task { .requestPlain }
///     var headers: [String: String]? { nil }
///
///     var operationName: String { name }
/// }
/// ```
///
/// The name is the `moya.target` dimension of the duration and body-size metrics, when the
/// session includes target names (``SessionMetricsOptions/includesTargetName``),
/// the `moya.target` attribute of the request's client span, whenever the session traces, and
/// the target's name in ``NetworkLoggerPlugin``'s entries and `moya.target` log metadata (unless
/// its redaction is turned off, ``NetworkLoggerPlugin/Configuration/Redaction/redactsTargetDetails``).
/// The span keeps its name, the request's method, as OpenTelemetry's conventions for HTTP
/// client spans ask (`{method}`, never a name of the application's). A ``MultiTarget`` is named
/// by the target it wraps.
///
/// Keep the names few and free of user data (an operation's identifier, never a path with its
/// parameters): every name makes series of its own in a metrics backend.
public protocol NamedTarget: TargetType {
    /// The name of the operation this request performs (`getUser`).
    var operationName: String { get }
}
