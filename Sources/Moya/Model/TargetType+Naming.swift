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

    /// The route this target's requests take, for what the resilience policies learn per route
    /// of an origin (a hedge's percentile, an adaptive limit's latency baseline): a
    /// ``NamedTarget``'s operation, an enum's type and case (`UserAPI.profile`), or another
    /// target's type and path with each segment that holds a digit (0-9) as `{}`
    /// (`Remote /users/{}`), so that one route is not a route per user.
    var routeName: String {
        if let multiTarget = self as? MultiTarget { return multiTarget.target.routeName }
        if let operation = namedOperation { return operation }
        // One reflection, which is most of what naming the route costs.
        let mirror = Mirror(reflecting: self)
        guard mirror.displayStyle != .enum else { return "\(type(of: self)).\(Self.caseName(of: self, reflectedBy: mirror))" }
        return "\(type(of: self)) \(Self.routeTemplate(of: path))"
    }

    /// `path` with each segment that holds an ASCII digit written `{}` (`/users/{}/repos/{}`
    /// for `/users/42/repos/7f3a`); a path without digits as it is. Read as bytes: a
    /// character's Unicode properties cost more than the rest of naming the route.
    static func routeTemplate(of path: String) -> String {
        let isDigit: (UInt8) -> Bool = { $0 &- UInt8(ascii: "0") < 10 }
        let bytes = path.utf8
        guard bytes.contains(where: isDigit) else { return path }
        var template = ""
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            let segment = bytes[start..<end]
            template += segment.contains(where: isDigit) ? "{}" : Substring(segment)
            guard end < bytes.endIndex else { return template }
            template += "/"
            start = bytes.index(after: end)
        }
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
