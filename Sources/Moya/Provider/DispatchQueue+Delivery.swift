import Dispatch

extension DispatchQueue {
    /// A stand-in callback queue meaning "call right where the result arrives".
    ///
    /// The async API passes it when the provider has no plugins: the only callback then resumes
    /// the awaiting task, which needs no queue of its own, so a hop through a queue would only
    /// cost a thread wake-up per request. It is a real queue, so that code which does not know
    /// the convention (a delayed stub, an interceptor's serial queue) still works through it.
    static let moyaInline = DispatchQueue(label: "org.moya.inline", attributes: .concurrent)

    /// Runs `work` on this queue, or at once when this is ``moyaInline``.
    func moyaDeliver(_ work: @escaping @Sendable () -> Void) {
        if self === DispatchQueue.moyaInline {
            work()
        } else {
            async(execute: work)
        }
    }

    /// Calls `body` with `value` on this queue, or at once when this is ``moyaInline``: the one
    /// way a result, an error or an event crosses to the user's callback queue.
    ///
    /// Neither needs to be `Sendable`: they are the user's completion and what it receives, or
    /// a closure that calls the user's plugins, and Moya documents that these run on the
    /// callback queue. They are handed over once and only used there (see ``UncheckedSendable``).
    func moyaDeliver<Value>(_ value: Value, to body: @escaping (Value) -> Void) {
        let handOver = UncheckedSendable((value, body))
        moyaDeliver { handOver.value.1(handOver.value.0) }
    }

    /// Calls `body` with `value` on this queue after `seconds` (at once for a negative delay).
    func moyaDeliver<Value>(_ value: Value, after seconds: Double, to body: @escaping (Value) -> Void) {
        let handOver = UncheckedSendable((value, body))
        asyncAfter(deadline: .now() + max(0, seconds)) { handOver.value.1(handOver.value.0) }
    }

    /// Calls `body` with `value` on `queue`, or right here, on the calling thread, when `queue`
    /// is `nil` (an `.immediate` stub, or a request closure's failure, without a callback queue).
    static func moyaDeliver<Value>(_ value: Value, on queue: DispatchQueue?, to body: @escaping (Value) -> Void) {
        if let queue {
            queue.moyaDeliver(value, to: body)
        } else {
            body(value)
        }
    }
}
