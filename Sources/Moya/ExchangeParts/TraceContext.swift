import Tracing

/// The trace context of the code that made a request: the `ServiceContext` bound to its task
/// (or thread) when it called the provider. The request's client span is its child, and its
/// values are injected into the request's headers. With it, the name of the target's operation
/// (``NamedTarget``), an attribute of the span.
///
/// Captured when the request is made, not when it is sent: the callback API sends from other
/// threads (after the request closure, interceptors, a retry's delay), where the caller's
/// task-local context is gone.
struct TraceContext: Sendable {
    /// The caller's context; `nil` when it had none (the span is then a root).
    let serviceContext: ServiceContext?
    /// The target's ``NamedTarget/operationName``, the span's `moya.target`.
    var operationName: String? = nil
}
