/// Values kept per route of an origin (``TargetRoute``), so that a slow route's latencies are
/// not read as another's. Bounded: past ``limit`` routes, the others share one value (the
/// unnamed route's), as do requests that name no route.
struct RouteTable<Value: Sendable>: Sendable {
    /// The most routes kept apart.
    static var limit: Int { 64 }

    private var values: [TargetRoute: Value] = [:]
    /// The value a new route starts with.
    private let initial: Value

    init(initial: Value) {
        self.initial = initial
    }

    /// Changes the value of `route` in place (no copy of what it holds) with `body`: a route
    /// kept already is found with one lookup; a new one starts from the initial value, unless
    /// the table is full (then it shares the unnamed route's).
    mutating func update<Result>(_ route: TargetRoute, _ body: (inout Value) -> Result) -> Result {
        if let index = values.index(forKey: route) {
            return body(&values.values[index])
        }
        let key = values.count < Self.limit ? route : TargetRoute.unnamed
        let initial = initial
        return body(&values[key, default: initial])
    }
}
