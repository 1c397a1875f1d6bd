#if ReactiveMoya
import Foundation
import Moya
import ReactiveSwift

/// One start of a producer made by this module: the observer it sends to, the work it started
/// (a request or a task), and whether that work or the producer's lifetime ended first.
///
/// When the lifetime ends first (the producer was disposed of or interrupted), the work is
/// cancelled, once, and whatever the work reports afterwards is dropped. When the work ends
/// first, its last events are sent and the lifetime that ends with them cancels nothing.
final class ProducerRun<Value>: @unchecked Sendable {
    // Sendable: `state` is only touched with `lock` held, and the observer is called outside
    // it. `observer` is the input observer of the producer's signal, which ReactiveSwift lets
    // any thread send to: the signal serializes the events.
    private enum Phase {
        /// The work may still send events.
        case running
        /// The work ended and sent its last events.
        case finished
        /// The lifetime ended before the work did.
        case interrupted
    }

    private struct State {
        var phase = Phase.running
        /// Cancels the work; set once the work has started, dropped when either side ends.
        var cancel: (() -> Void)?
    }

    private let lock = NSLock()
    private var state = State()
    private let observer: Signal<Value, MoyaError>.Observer

    /// Starts watching `lifetime`: if it has already ended, the run is interrupted at once.
    init(observer: Signal<Value, MoyaError>.Observer, lifetime: Lifetime) {
        self.observer = observer
        lifetime.observeEnded { [self] in
            interrupt()
        }
    }

    /// Whether the lifetime ended before the work did; nothing is worth starting then.
    var isInterrupted: Bool {
        lock.withLock { state.phase == .interrupted }
    }

    /// Hands over how to cancel the started work. If the lifetime has already ended while the
    /// work was starting, `cancel` is called now; if the work has already ended (a stub that
    /// completes at once), it is never called.
    func attach(cancel: @escaping () -> Void) {
        let cancelNow: Bool = lock.withLock {
            switch state.phase {
            case .running:
                state.cancel = cancel
                return false
            case .finished:
                return false
            case .interrupted:
                return true
            }
        }
        if cancelNow { cancel() }
    }

    /// Sends `value`, unless the run is over.
    ///
    /// - Returns: `false` once the run is over: the work may stop.
    @discardableResult
    func send(_ value: Value) -> Bool {
        guard lock.withLock({ state.phase == .running }) else { return false }
        observer.send(value: value)
        return true
    }

    /// Ends the run: sends `last`, if any, then completes; nothing once the run is over.
    func complete(with last: Value? = nil) {
        guard finish() else { return }
        if let last { observer.send(value: last) }
        observer.sendCompleted()
    }

    /// Ends the run with `error`; nothing once the run is over.
    func fail(_ error: MoyaError) {
        guard finish() else { return }
        observer.send(error: error)
    }

    /// Marks the work as ended; `false` when the run was already over.
    private func finish() -> Bool {
        lock.withLock {
            guard state.phase == .running else { return false }
            state.phase = .finished
            state.cancel = nil
            return true
        }
    }

    /// The lifetime ended: cancels the work unless it has already ended.
    private func interrupt() {
        let cancel: (() -> Void)? = lock.withLock {
            guard state.phase == .running else { return nil }
            state.phase = .interrupted
            defer { state.cancel = nil }
            return state.cancel
        }
        cancel?()
    }
}
extension SignalProducer where Error == MoyaError {
    /// A producer whose every start runs `body` in a task of its own: `body` sends values with
    /// `send` (which returns `false` once the run is over, when `body` may stop), and its end
    /// completes the run, or fails it with its `MoyaError`. Disposing of the producer cancels
    /// the task; a start whose lifetime already ended starts nothing.
    static func running(_ body: @escaping @Sendable (_ send: (Value) -> Bool) async throws(MoyaError) -> Void) -> SignalProducer<Value, MoyaError> {
        SignalProducer { observer, lifetime in
            let run = ProducerRun(observer: observer, lifetime: lifetime)
            guard !run.isInterrupted else { return }
            let task = _Concurrency.Task {
                do throws(MoyaError) {
                    try await body { run.send($0) }
                    run.complete()
                } catch {
                    run.fail(error)
                }
            }
            run.attach { task.cancel() }
        }
    }
}
#endif
