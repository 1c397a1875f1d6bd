#if ReactiveMoya
import Foundation
import Moya
import ReactiveSwift

/// `provider.reactive` hosts the ReactiveSwift extensions of a provider.
extension MoyaProvider: ReactiveExtensionsProvider {}

extension Reactive where Base: MoyaProviderType {
    /// A producer that sends a request for `token` and sends its response.
    ///
    /// Each start sends its own request, through the provider's whole pipeline (stubs,
    /// plugins, validation, `trackInflights`). It sends one `Response` and completes, or fails
    /// with the request's `MoyaError`. Disposing of the producer (or interrupting it) before
    /// the response has arrived cancels the request; after that, it cancels nothing. While it
    /// runs, the producer keeps the provider alive.
    ///
    /// ```swift
    /// let disposable = provider.reactive.request(.zen, callbackQueue: .global())
    ///     .mapString()
    ///     .startWithResult { result in print(result) }
    /// ```
    ///
    /// - Parameters:
    ///   - token:         The target to request.
    ///   - callbackQueue: Where the value and the end are sent; when `nil`, the provider's
    ///                    queue, or the main queue as in the callback API.
    /// - Returns: A producer of the response.
    public func request(_ token: Base.Target, callbackQueue: DispatchQueue? = nil) -> SignalProducer<Response, MoyaError> {
        let provider = base
        return SignalProducer { observer, lifetime in
            let run = ProducerRun(observer: observer, lifetime: lifetime)
            guard !run.isInterrupted else { return }
            let cancellable = provider.request(token, callbackQueue: callbackQueue, progress: nil) { result in
                switch result {
                case .success(let response):
                    run.complete(with: response)
                case .failure(let error):
                    run.fail(error)
                }
            }
            run.attach { cancellable.cancel() }
        }
    }

    /// A producer that sends a request for `token` and sends its progress.
    ///
    /// It sends the transfer's progress events, then one event whose
    /// `ProgressResponse.completed` is `true` and whose `response` is the validated response,
    /// and completes; a failed request fails with its `MoyaError`. Every event carries the
    /// latest progress snapshot. Starts, disposal and the provider's lifetime work as for
    /// ``request(_:callbackQueue:)``.
    ///
    /// ```swift
    /// let disposable = provider.reactive.requestWithProgress(.download, callbackQueue: .global())
    ///     .startWithResult { result in
    ///         switch result {
    ///         case .success(let event) where event.completed:
    ///             print("\(event.response?.data.count ?? 0) bytes")
    ///         case .success(let event):
    ///             print("\(Int(event.progress * 100)) %")
    ///         case .failure(let error):
    ///             print(error)
    ///         }
    ///     }
    /// ```
    ///
    /// - Parameters:
    ///   - token:         The target to request.
    ///   - callbackQueue: Where events and the end are sent; when `nil`, the provider's queue,
    ///                    or the main queue as in the callback API.
    /// - Returns: A producer of progress events.
    public func requestWithProgress(_ token: Base.Target, callbackQueue: DispatchQueue? = nil) -> SignalProducer<ProgressResponse, MoyaError> {
        let provider = base
        return SignalProducer { observer, lifetime in
            let run = ProducerRun(observer: observer, lifetime: lifetime)
            guard !run.isInterrupted else { return }
            // The latest snapshot, for the event that carries the response. The lock: a
            // concurrent callback queue may run the progress block and the completion at once.
            let lock = NSLock()
            var latest: Progress?
            // The provider's own completed event is held back: the completion brings the
            // response after the plugins' `process`, and that is the one sent.
            let progress: ProgressBlock = { event in
                if let snapshot = event.progressObject { lock.withLock { latest = snapshot } }
                if !event.completed {
                    run.send(event)
                }
            }
            let cancellable = provider.request(token, callbackQueue: callbackQueue, progress: progress) { result in
                switch result {
                case .success(let response):
                    run.complete(with: ProgressResponse(progress: lock.withLock { latest }, response: response))
                case .failure(let error):
                    run.fail(error)
                }
            }
            run.attach { cancellable.cancel() }
        }
    }
}
#endif
