/// A request's interceptors, in order, and the same list as ``ImmediateRequestInterceptor``s when
/// every one of them decides without waiting.
///
/// Which kind each interceptor is gets worked out once, when the provider is made (or a target
/// adds its own), not by a cast per interceptor on every request.
struct InterceptorChain: Sendable {
    /// Every interceptor, in the order they adapt a request and are asked about a retry.
    let all: [RequestInterceptor]
    /// The same interceptors when each decides without waiting; `nil` when any may wait.
    let immediate: [any ImmediateRequestInterceptor]?

    init(_ interceptors: [RequestInterceptor]) {
        all = interceptors
        let immediate = interceptors.compactMap { $0 as? any ImmediateRequestInterceptor }
        self.immediate = immediate.count == interceptors.count ? immediate : nil
    }

    /// Whether there is no interceptor at all.
    var isEmpty: Bool {
        all.isEmpty
    }

    /// This chain with `interceptor` added last.
    func appending(_ interceptor: RequestInterceptor) -> InterceptorChain {
        InterceptorChain(all + [interceptor])
    }
}
