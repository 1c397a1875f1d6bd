/// Which route of its origin a target's requests take, for what the resilience policies learn
/// per route (a hedge's percentile, an adaptive limit's latency baseline): a ``NamedTarget``'s
/// operation (a ``MultiTarget``'s is the route of the target it wraps); for any other target,
/// its type, its method and its path with each segment that holds a digit (0-9) as `{}`
/// (`GET /users/{}` for `/users/42`), so that one route is not a route per user.
///
/// Made without reflection or the type's printed name: a route is made for every request whose
/// policies learn per route, and a `Mirror` of the target cost more than the rest of its
/// policies.
///
/// A route is kept as a 64-bit fingerprint of what names it (a hash of the type, the method and
/// the template, or of the operation's name), not as the strings themselves: a request makes
/// its route without building the template, and a route table hashes and compares one number.
/// The fingerprint comes from the standard library's `Hasher`, whose seed is new in every
/// process, so two routes share a fingerprint only by chance (about one in 2⁶⁴ per pair), and
/// nobody can pick paths that do. Two routes that did would share what their origin learns of
/// them, as the routes past a table's bound do (``RouteTable``).
struct TargetRoute: Hashable, Sendable {
    /// The fingerprint; 0 for ``unnamed``.
    private let key: UInt64

    /// The route of requests that name none: they share one.
    static let unnamed = TargetRoute(key: 0)

    private init(key: UInt64) {
        self.key = key
    }

    /// A route from `hasher`, which has taken in what names it; never ``unnamed``'s key.
    private init(_ hasher: Hasher) {
        let key = UInt64(truncatingIfNeeded: hasher.finalize())
        self.init(key: key == 0 ? 1 : key)
    }

    /// The route of the operation `name` (a ``NamedTarget``'s ``NamedTarget/operationName``).
    init(operation name: String) {
        var hasher = Hasher()
        hasher.combine(Kind.operation)
        hasher.combine(name)
        self.init(hasher)
    }

    /// What a fingerprint is of: an operation's name, or a target type's method and path.
    private enum Kind: UInt8, Hashable {
        case operation
        case path
    }

    /// The route of `target`'s requests.
    ///
    /// - Parameter mayBeNamed: `false` when no target of this type can be a ``NamedTarget`` (a
    ///   value type that does not adopt it, as ``mayBeNamed(_:)`` tells): the cast that asks is
    ///   then skipped. It took more than half of a route's cost.
    init<Target: TargetType>(of target: Target, mayBeNamed: Bool = true) {
        if Target.self == MultiTarget.self, let multiTarget = target as? MultiTarget {
            self.init(ofWrapped: multiTarget.target)
        } else if mayBeNamed, let operation = (target as? any NamedTarget)?.operationName {
            self.init(operation: operation)
        } else {
            var hasher = Hasher()
            hasher.combine(Kind.path)
            hasher.combine(ObjectIdentifier(Target.self))
            hasher.combine(target.method.rawValue)
            Self.combineTemplate(of: target.path, into: &hasher)
            self.init(hasher)
        }
    }

    /// Whether a target of type `Target` can be a ``NamedTarget``: when the type adopts it, or
    /// is a class (a subclass may adopt it) or ``MultiTarget`` (the wrapped target may).
    static func mayBeNamed<Target: TargetType>(_: Target.Type) -> Bool {
        Target.self is AnyClass || Target.self == MultiTarget.self || Target.self is any NamedTarget.Type
    }

    /// The route of `target`, a ``MultiTarget``'s: its own type's, not the wrapper's.
    private init(ofWrapped target: any TargetType) {
        self.init(of: target)
    }

    /// Feeds `hasher` the bytes of `path`'s template: `path` with each segment (between
    /// slashes) that holds an ASCII digit written `{}` (`/users/{}/repos/{}` for
    /// `/users/42/repos/7f3a`), a path without digits as it is. The template is never built:
    /// each segment goes to the hasher as it is found, from the string's own storage.
    static func combineTemplate(of path: String, into hasher: inout Hasher) {
        var path = path
        path.withUTF8 { bytes in
            let slash = UInt8(ascii: "/")
            // Where the segment being read starts, and whether it holds a digit so far.
            var start = 0
            var hasDigit = false
            for index in 0...bytes.count {
                let byte = index < bytes.count ? bytes[index] : slash
                if byte == slash {
                    // A hasher takes in bytes as one stream, however they are given.
                    if hasDigit {
                        hasher.combine(UInt8(ascii: "{"))
                        hasher.combine(UInt8(ascii: "}"))
                    } else {
                        hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<index])))
                    }
                    // The end of the path is no slash of its own.
                    if index < bytes.count { hasher.combine(slash) }
                    (start, hasDigit) = (index + 1, false)
                } else if byte &- UInt8(ascii: "0") < 10 {
                    hasDigit = true
                }
            }
        }
    }
}
