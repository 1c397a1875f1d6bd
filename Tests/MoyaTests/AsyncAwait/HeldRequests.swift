import Foundation
import Moya

/// A one-shot gate that a `requestClosure` can wait behind until the test opens it.
final class HeldRequests: @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var held: [() -> Void] = []

    /// Keeps `release` until ``releaseAll()``.
    func hold(_ release: @escaping () -> Void) {
        lock.withLock { held.append(release) }
    }

    var count: Int { lock.withLock { held.count } }

    func releaseAll() {
        let all = lock.withLock { () -> [() -> Void] in
            defer { held = [] }
            return held
        }
        for action in all { action() }
    }
}

/// Runs a typed-throwing request and returns its outcome as a `Result`.
func attempt(_ body: () async throws(MoyaError) -> Moya.Response) async -> Result<Moya.Response, MoyaError> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
