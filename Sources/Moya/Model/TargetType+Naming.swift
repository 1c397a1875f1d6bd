import Foundation

extension TargetType {
    /// The name of this target's operation: its own for a ``NamedTarget`` (the wrapped
    /// target's for a ``MultiTarget``), `nil` for any other.
    var namedOperation: String? {
        if let multiTarget = self as? MultiTarget {
            return multiTarget.target.namedOperation
        }
        return (self as? any NamedTarget)?.operationName
    }

    /// The case of `target`, an enum reflected by `mirror`: a case with associated values has
    /// one child, labelled with the case's name; one without prints as its name (unless the
    /// enum describes itself; even then nothing after a parenthesis is kept).
    private static func caseName(of target: Self, reflectedBy mirror: Mirror) -> String {
        if let label = mirror.children.first?.label {
            return label
        }
        guard mirror.children.isEmpty else {
            return "\(Self.self)"
        }
        return String(String(describing: target).prefix { $0 != "(" })
    }

    /// This target's name without its details: a ``NamedTarget``'s operation; for an enum, the
    /// case (`login` for `.login(username: "ann", password: "…")`, read from the case's
    /// reflection rather than from a description that could show the values); for any other
    /// target, its type and path (`UserTarget /users/42`). A ``MultiTarget`` is named by the
    /// target it wraps.
    ///
    /// ``NetworkLoggerPlugin`` names targets with it; the request metrics too (`moya.target`),
    /// without the path (`includingPath: false`), which could make a name per user.
    func caseName(includingPath: Bool = true) -> String {
        let target: TargetType = self
        if let operation = target.namedOperation {
            return operation
        }
        if let multiTarget = target as? MultiTarget {
            return multiTarget.target.caseName(includingPath: includingPath)
        }

        let mirror = Mirror(reflecting: target)
        guard mirror.displayStyle == .enum else {
            return includingPath ? "\(type(of: target)) \(target.path)" : "\(type(of: target))"
        }
        return Self.caseName(of: self, reflectedBy: mirror)
    }
}
