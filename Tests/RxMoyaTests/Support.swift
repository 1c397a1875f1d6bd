#if RxMoya
import Foundation
import Moya
import MoyaTestServer
import RxSwift

// The helpers without RxSwift (`Remote`, `ResultsPlugin`, `CountingProvider`, `eventually`, ...)
// are in MoyaTestServer's ReactiveTestSupport.swift, shared with the other reactive targets.

/// An observer that records every event it gets.
final class Recorder<Element>: ObserverType, @unchecked Sendable {
    // Sendable: `recorded` is only touched with `lock` held.
    private let lock = NSLock()
    private var recorded: [RxSwift.Event<Element>] = []

    func on(_ event: RxSwift.Event<Element>) {
        lock.withLock { recorded.append(event) }
    }

    /// Everything received, in order.
    var events: [RxSwift.Event<Element>] { lock.withLock { recorded } }
    /// The elements received.
    var values: [Element] { events.compactMap(\.element) }
    /// Whether the sequence ended, with an error or a completion.
    var isTerminated: Bool { events.last?.isStopEvent == true }
    /// Whether it completed.
    var isCompleted: Bool { events.last?.isCompleted == true }
    /// The error it failed with, as a `MoyaError`.
    var moyaError: MoyaError? { events.last?.error as? MoyaError }
}

/// `provider.rx` for the shared counting provider.
extension CountingProvider: ReactiveCompatible {}
#endif
