import NIOSSL

/// The TLS configurations a session has built for its trust policies, so that each is built
/// once.
///
/// Without it, every request to a host with an evaluator got a configuration of its own: pinned
/// certificates parsed again from their DER bytes, and new certificate objects that
/// AsyncHTTPClient then had to hash and compare (`X509_cmp`) to find the connection pool they
/// belong to. With the same configuration each time, the pool lookup finds equal objects at
/// once, and nothing is parsed per request.
///
/// A session has few distinct policies (one per evaluator of its ``ServerTrustManager``); the
/// cache keeps at most ``capacity`` of them, dropping the oldest, so that a manager that makes a
/// new policy for every host cannot grow it without bound.
final class TrustConfigurationCache: Sendable {
    /// The most configurations kept.
    static let capacity = 16

    private struct Entry: Sendable {
        let policy: ServerTrustPolicy
        let configuration: TLSConfiguration
    }

    private let entries = Protected<[Entry]>([])

    init() {}

    /// The configuration for `policy`: the one built before, or a new one from `build`, kept.
    /// A `build` that throws keeps nothing, and the next request tries again.
    func configuration(for policy: ServerTrustPolicy, build: () throws -> TLSConfiguration) rethrows -> TLSConfiguration {
        if let cached = entries.withLock({ entries in entries.first { $0.policy == policy }?.configuration }) {
            return cached
        }
        // Built outside the lock: parsing certificates takes a while.
        let configuration = try build()
        entries.withLock { entries in
            guard !entries.contains(where: { $0.policy == policy }) else { return }
            if entries.count == Self.capacity { entries.removeFirst() }
            entries.append(Entry(policy: policy, configuration: configuration))
        }
        return configuration
    }

    /// How many configurations are kept.
    var count: Int {
        entries.withLock { $0.count }
    }
}
