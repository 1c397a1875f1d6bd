import Foundation

/// A target that wraps any other target, so one provider can serve several target types.
///
/// ```swift
/// let provider = MoyaProvider<MultiTarget>()
/// provider.request(MultiTarget(GitHub.zen)) { result in print(result) }
/// ```
public enum MultiTarget: TargetType {
    /// The wrapped target.
    case target(TargetType)

    /// Wraps `target`.
    ///
    /// - Parameter target: The target to wrap.
    public init(_ target: TargetType) {
        self = .target(target)
    }

    /// The wrapped target.
    public var target: TargetType {
        switch self {
        case .target(let target): return target
        }
    }

    /// The wrapped target's path.
    public var path: String { target.path }

    /// The wrapped target's base URL.
    public var baseURL: URL { target.baseURL }

    /// The wrapped target's method.
    public var method: Moya.Method { target.method }

    /// The wrapped target's sample data.
    public var sampleData: Data { target.sampleData }

    /// The wrapped target's task.
    public var task: Task { target.task }

    /// The wrapped target's validation.
    public var validationType: ValidationType { target.validationType }

    /// The wrapped target's headers.
    public var headers: [String: String]? { target.headers }
}
