/// Which response status codes a request accepts; others fail with ``MoyaError/statusCode(_:)``.
public enum ValidationType: Equatable, Hashable, Sendable {
    /// No validation: every status code succeeds.
    case none

    /// Accepts 2xx codes only.
    case successCodes

    /// Accepts 2xx and 3xx codes.
    case successAndRedirectCodes

    /// Accepts only the listed codes. An empty list means no validation.
    case customCodes([Int])

    /// The accepted status codes; empty means "accept everything".
    public var statusCodes: [Int] {
        switch self {
        case .none: return []
        case .successCodes: return Array(200..<300)
        case .successAndRedirectCodes: return Array(200..<400)
        case .customCodes(let codes): return codes
        }
    }

    /// Whether `statusCode` passes this validation.
    ///
    /// - Parameter statusCode: The response's status code.
    /// - Returns: `true` when the code is accepted.
    public func accepts(_ statusCode: Int) -> Bool {
        switch self {
        case .none: return true
        case .successCodes: return (200..<300).contains(statusCode)
        case .successAndRedirectCodes: return (200..<400).contains(statusCode)
        case .customCodes(let codes): return codes.isEmpty || codes.contains(statusCode)
        }
    }
}
