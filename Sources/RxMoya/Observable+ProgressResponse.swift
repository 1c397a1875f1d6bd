#if RxMoya
import Moya
import RxSwift

extension ObservableType where Element == ProgressResponse {
    /// Emits only the response of the completed event.
    ///
    /// ```swift
    /// let disposable = provider.rx.requestWithProgress(.download, callbackQueue: .global())
    ///     .filterCompleted()
    ///     .subscribe(onNext: { print("\($0.data.count) bytes") })
    /// ```
    ///
    /// - Returns: An `Observable` of the response.
    public func filterCompleted() -> Observable<Response> {
        compactMap(\.response)
    }

    /// Emits the progress fraction of every event before the completed one.
    ///
    /// - Returns: An `Observable` of fractions from 0 to 1.
    public func filterProgress() -> Observable<Double> {
        filter { !$0.completed }.map(\.progress)
    }
}
#endif
