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
}
