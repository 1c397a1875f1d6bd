import Foundation

/// Where the async API's callbacks run when the provider has no `callbackQueue`.
enum ConcurrencyQueue {
    /// A concurrent queue of the library's own; the provider keeps progress events in order on it.
    static let shared = DispatchQueue(label: "org.moya.concurrency", attributes: .concurrent)
}
