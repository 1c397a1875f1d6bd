#if RxMoya
import Foundation
import Moya
import RxSwift

/// Gives every provider its `rx` namespace: `provider.rx.request(.zen)`.
extension MoyaProvider: ReactiveCompatible {}

extension Reactive where Base: MoyaProviderType {
    /// A `Single` that sends a request for `target` and emits its response.
    ///
    /// It emits one `Response`, or fails with the request's `MoyaError`. Nothing is sent until
    /// it is subscribed to; each subscription sends its own request, through the provider's whole
    /// pipeline (stubs, plugins, validation, `trackInflights`). Disposing of the subscription
    /// before the response cancels the request; disposing of it afterwards does nothing. While
    /// the request runs, the subscription keeps the provider alive.
    ///
    /// ```swift
    /// let disposable = provider.rx.request(.zen, callbackQueue: .global())
    ///     .mapString()
    ///     .subscribe(onSuccess: { print($0) }, onFailure: { print($0) })
    /// ```
    ///
    /// - Parameters:
    ///   - target:        What to request.
    ///   - callbackQueue: Where the response or the error is delivered; when `nil`, the
    ///                    provider's queue, or the main queue as in the callback API.
    /// - Returns: A `Single` of the response.
    public func request(_ target: Base.Target, callbackQueue: DispatchQueue? = nil) -> Single<Response> {
        // Held strongly, by the `Single` and by each request's completion: a subscription keeps
        // the provider alive until its request ends (Moya 15 held it weakly).
        let provider = base
        return Single.create { observer in
            let subscription = RequestDisposable()
            let cancellable = provider.request(target, callbackQueue: callbackQueue, progress: nil) { result in
                // The completion holds the provider until the request ends.
                withExtendedLifetime(provider) {}
                guard subscription.finish() else { return }
                switch result {
                case .success(let response):
                    observer(.success(response))
                case .failure(let error):
                    observer(.failure(error))
                }
            }
            subscription.attach(cancellable)
            return subscription
        }
    }

    /// An `Observable` that sends a request for `target` and emits its progress.
    ///
    /// It emits the transfer's progress events, then one event whose
    /// `ProgressResponse.completed` is `true` and whose `response` is the response the request
    /// delivers (after the plugins' `process`), and completes; a failed request fails with its
    /// `MoyaError`. Every event carries the latest progress snapshot. Subscription, disposal and
    /// the provider's lifetime work as for ``request(_:callbackQueue:)``.
    ///
    /// ```swift
    /// let disposable = provider.rx.requestWithProgress(.download, callbackQueue: .global())
    ///     .subscribe(onNext: { event in
    ///         if let response = event.response {
    ///             print("done: \(response.data.count) bytes")
    ///         } else {
    ///             print("progress: \(event.progress)")
    ///         }
    ///     })
    /// ```
    ///
    /// - Parameters:
    ///   - target:        What to request.
    ///   - callbackQueue: Where events are delivered; when `nil`, the provider's queue, or the
    ///                    main queue as in the callback API.
    /// - Returns: An `Observable` of progress events.
    public func requestWithProgress(_ target: Base.Target, callbackQueue: DispatchQueue? = nil) -> Observable<ProgressResponse> {
        let provider = base
        return Observable.create { observer in
            let subscription = RequestDisposable()
            // The latest snapshot, for the event that carries the response. The lock: a
            // concurrent callback queue may run the progress block and the completion at once.
            let lock = NSLock()
            var latest: Progress?
            let progress: ProgressBlock = { event in
                if let snapshot = event.progressObject { lock.withLock { latest = snapshot } }
                // The provider's own completed event is left out: the one emitted at the end
                // carries the response as the completion delivers it, after `process`.
                guard !event.completed else { return }
                observer.onNext(event)
            }
            let cancellable = provider.request(target, callbackQueue: callbackQueue, progress: progress) { result in
                // The completion holds the provider until the request ends.
                withExtendedLifetime(provider) {}
                guard subscription.finish() else { return }
                switch result {
                case .success(let response):
                    observer.onNext(ProgressResponse(progress: lock.withLock { latest }, response: response))
                    observer.onCompleted()
                case .failure(let error):
                    observer.onError(error)
                }
            }
            subscription.attach(cancellable)
            return subscription
        }
    }
}
#endif
