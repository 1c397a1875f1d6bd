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
/// A class, though it is a value that never changes (compared and hashed by what it holds): a
/// request's flight, its transport request and its permit each keep its route, almost always
/// ``unnamed``, and one reference is eight bytes where the value is forty.
final class TargetRoute: Hashable, Sendable {
    /// The target's type; `nil` for a named operation, which is its own route.
    private let type: ObjectIdentifier?
    private let method: String
    /// The path template, or the operation's name.
    private let path: String

    /// The route of requests that name none: they share one.
    static let unnamed = TargetRoute(type: nil, method: "", path: "")

    private init(type: ObjectIdentifier?, method: String, path: String) {
        self.type = type
        self.method = method
        self.path = path
    }

    /// The route of the operation `name` (a ``NamedTarget``'s ``NamedTarget/operationName``).
    convenience init(operation name: String) {
        self.init(type: nil, method: "", path: name)
    }

    /// The route of `target`'s requests.
    ///
    /// - Parameter mayBeNamed: `false` when no target of this type can be a ``NamedTarget`` (a
    ///   value type that does not adopt it, as ``mayBeNamed(_:)`` tells): the cast that asks is
    ///   then skipped. It took more than half of a route's cost.
    convenience init<Target: TargetType>(of target: Target, mayBeNamed: Bool = true) {
        if Target.self == MultiTarget.self, let multiTarget = target as? MultiTarget {
            self.init(ofWrapped: multiTarget.target)
        } else if mayBeNamed, let operation = (target as? any NamedTarget)?.operationName {
            self.init(operation: operation)
        } else {
            self.init(type: ObjectIdentifier(Target.self), method: target.method.rawValue, path: Self.template(of: target.path))
        }
    }

    /// Whether a target of type `Target` can be a ``NamedTarget``: when the type adopts it, or
    /// is a class (a subclass may adopt it) or ``MultiTarget`` (the wrapped target may).
    static func mayBeNamed<Target: TargetType>(_: Target.Type) -> Bool {
        Target.self is AnyClass || Target.self == MultiTarget.self || Target.self is any NamedTarget.Type
    }

    /// The route of `target`, a ``MultiTarget``'s: its own type's, not the wrapper's.
    private convenience init(ofWrapped target: any TargetType) {
        self.init(of: target)
    }

    /// Two routes are the same when they hold the same type, method and path.
    static func == (lhs: TargetRoute, rhs: TargetRoute) -> Bool {
        lhs === rhs || (lhs.type == rhs.type && lhs.method == rhs.method && lhs.path == rhs.path)
    }

    /// Hashes what ``==`` compares.
    func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(method)
        hasher.combine(path)
    }

    /// `path` with each segment that holds an ASCII digit written `{}` (`/users/{}/repos/{}`
    /// for `/users/42/repos/7f3a`); a path without digits as it is. Read and written as bytes,
    /// in one buffer: a character's Unicode properties, and a string appended to segment by
    /// segment, cost more than the rest of the route.
    static func template(of path: String) -> String {
        let isDigit: (UInt8) -> Bool = { $0 &- UInt8(ascii: "0") < 10 }
        guard path.utf8.contains(where: isDigit) else { return path }
        var template: [UInt8] = []
        template.reserveCapacity(path.utf8.count + 8)
        // Where the segment being copied starts in `template`, and whether it holds a digit.
        var segmentStart = 0
        var segmentHasDigit = false
        func endSegment() {
            guard segmentHasDigit else { return }
            template.removeSubrange(segmentStart...)
            template += "{}".utf8
        }
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                endSegment()
                template.append(byte)
                (segmentStart, segmentHasDigit) = (template.count, false)
            } else {
                template.append(byte)
                segmentHasDigit = segmentHasDigit || isDigit(byte)
            }
        }
        endSegment()
        return String(decoding: template, as: UTF8.self)
    }
}
