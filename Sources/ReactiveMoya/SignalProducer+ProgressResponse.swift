#if ReactiveMoya
import Moya
import ReactiveSwift

extension SignalProducerProtocol where Value == ProgressResponse, Error == MoyaError {
    /// Sends only the response of the completed event.
    ///
    /// ```swift
    /// let disposable = provider.reactive.requestWithProgress(.download, callbackQueue: .global())
    ///     .filterCompleted()
    ///     .startWithResult { result in print(result.map(\.statusCode)) }
    /// ```
    ///
    /// - Returns: A producer of the response.
    public func filterCompleted() -> SignalProducer<Response, MoyaError> {
        producer.compactMap(\.response)
    }

    /// Sends the progress fraction of every event before the completed one.
    ///
    /// ```swift
    /// let disposable = provider.reactive.requestWithProgress(.download, callbackQueue: .global())
    ///     .filterProgress()
    ///     .startWithResult { result in
    ///         if case .success(let fraction) = result {
    ///             print("\(Int(fraction * 100)) %")
    ///         }
    ///     }
    /// ```
    ///
    /// - Returns: A producer of fractions from 0 to 1.
    public func filterProgress() -> SignalProducer<Double, MoyaError> {
        producer.filter { !$0.completed }.map(\.progress)
    }
}
#endif
