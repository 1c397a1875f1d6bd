#if RxMoya
import Foundation
import Moya
import RxSwift

extension Observable {
    /// An `Observable` whose every subscription runs `body` in a task of its own: each element
    /// `body` passes to `emit` is emitted at once, on the task's thread; returning completes the
    /// sequence, throwing fails it. Disposing of the subscription cancels the task.
    ///
    /// There is no demand in Rx: `emit` returns when the observer has handled the element, so a
    /// `for await` loop around it reads the next element only then.
    static func running(_ body: @escaping @Sendable (_ emit: (Element) -> Void) async throws(MoyaError) -> Void) -> Observable<Element> {
        Observable.create { observer in
            // Unchecked: only the task calls the observer, one call after another (elements,
            // then one terminal event), as the observer contract asks; disposal, from any
            // thread, goes through the subscription's disposable, never through the observer,
            // and RxSwift's sink drops what the task sends after it.
            let box = UncheckedSendable(observer)
            let task = _Concurrency.Task {
                do throws(MoyaError) {
                    try await body { box.value.onNext($0) }
                    box.value.onCompleted()
                } catch {
                    box.value.onError(error)
                }
            }
            return Disposables.create { task.cancel() }
        }
    }
}

#endif
