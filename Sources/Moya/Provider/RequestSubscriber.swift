/// A caller waiting for a request's result: its completion, where to call it, and the target
/// as plugins see it.
struct RequestSubscriber: Sendable {
    /// The caller's id in its request (``RequestStateMachine/subscribe(_:callbackQueue:pluginTarget:)``).
    let id: Int
    /// Called once with the result.
    let completion: UncheckedSendable<Completion>
    /// Where the completion runs; `nil` for the main queue.
    let callbackQueue: DispatchQueue?
    /// The caller's target as plugins see it; `nil` when there are no plugins.
    let pluginTarget: UncheckedSendable<any TargetType>?
}

extension RequestSubscriber {
    /// A flight's first caller, known as the flight is made: it has the first id
    /// (``RequestStateMachine/firstSubscriberID``).
    static func first(_ completion: @escaping Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>?) -> Self {
        RequestSubscriber(
            id: RequestStateMachine<RequestFlight.Work>.firstSubscriberID, completion: UncheckedSendable(completion), callbackQueue: callbackQueue,
            pluginTarget: pluginTarget)
    }
}
