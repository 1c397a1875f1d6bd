#if ReactiveMoya
import Foundation
import Moya
import MoyaTestServer
import ReactiveSwift

// The helpers without ReactiveSwift (`Remote`, `ResultsPlugin`, `CountingProvider`,
// `eventually`, ...) are in MoyaTestServer's ReactiveTestSupport.swift, shared with the other
// reactive targets.

/// Starts a producer and records what it sends.
final class Recorder<Value>: Sendable {
    private let storage = Locked<[Signal<Value, MoyaError>.Event]>([])
    private let disposable = Locked<(any Disposable)?>(nil)

    init(_ producer: SignalProducer<Value, MoyaError>) {
        let storage = self.storage
        let disposable = producer.start { event in
            storage.update { $0.append(event) }
        }
        self.disposable.update { $0 = disposable }
    }

    /// Everything sent so far, in order.
    var events: [Signal<Value, MoyaError>.Event] { storage.value }
    /// The values sent so far.
    var values: [Value] { events.compactMap(\.value) }
    /// Whether the producer has terminated (completed, failed or been interrupted).
    var isTerminated: Bool { events.last?.isTerminating == true }
    /// Whether the producer has completed.
    var isCompleted: Bool { events.last?.isCompleted == true }
    /// The error the producer failed with, if it did.
    var error: MoyaError? { events.last?.error }

    /// Disposes of the producer.
    func dispose() {
        disposable.value?.dispose()
    }
}

extension MoyaError {
    var isJSONMapping: Bool {
        if case .jsonMapping = self { return true }
        return false
    }
}

/// `provider.reactive` for the shared counting provider.
extension CountingProvider: ReactiveExtensionsProvider {}
#endif
