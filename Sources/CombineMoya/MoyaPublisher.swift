import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// A publisher of the values of one Moya request, made by the `MoyaProvider` extensions of
/// this module.
///
/// Each subscription sends its own request, on its first demand. The request closure holds
/// the provider strongly, so a running subscription keeps its provider alive (Moya holds it
/// weakly, and a publisher whose provider went away never finished).
struct MoyaPublisher<Output: Sendable>: Publisher {
    /// Requests fail with Moya's error.
    typealias Failure = MoyaError

    /// Sends the request, passing its values to the first closure and its end to the second,
    /// and returns the request's token.
    typealias Start = (
        _ send: @escaping (Output) -> Void,
        _ finish: @escaping (Subscribers.Completion<MoyaError>) -> Void
    ) -> any Moya.Cancellable

    private let start: Start

    init(start: @escaping Start) {
        self.start = start
    }

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == MoyaError {
        subscriber.receive(subscription: MoyaSubscription(subscriber: subscriber, start: start))
    }
}
