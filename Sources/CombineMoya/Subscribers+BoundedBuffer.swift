import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

extension Subscribers.Demand {
    /// The demand as a `BoundedBuffer` counts it: `Int.max` for no limit.
    var count: Int {
        max ?? .max
    }
}

extension Subscribers.Completion where Failure == MoyaError {
    /// The completion for a `BoundedBuffer`'s end.
    init(_ end: Result<Void, MoyaError>) {
        switch end {
        case .success: self = .finished
        case .failure(let error): self = .failure(error)
        }
    }
}

extension Result where Success == Void, Failure == MoyaError {
    /// A `BoundedBuffer`'s end for a completion.
    init(_ completion: Subscribers.Completion<MoyaError>) {
        switch completion {
        case .finished: self = .success(())
        case .failure(let error): self = .failure(error)
        }
    }
}
