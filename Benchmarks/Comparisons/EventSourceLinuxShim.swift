// Compiled into mattt/EventSource's own module by sse-bench.sh, beside its unchanged sources.
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking

// FoundationNetworking has no `URLSession.bytes(for:delegate:)`, the one call that keeps
// EventSource 1.1.1 from building on Linux. The benchmark uses only its parser, so the network
// path that makes this call only has to compile: here it fails at once.
extension URLSession {
    /// Stands in for Foundation's asynchronous byte sequence; it is always empty.
    struct AsyncBytes: AsyncSequence {
        typealias Element = UInt8

        struct AsyncIterator: AsyncIteratorProtocol {
            mutating func next() async throws -> UInt8? { nil }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
    }

    /// Fails with `URLError(.unsupportedURL)`: nothing in the benchmark connects.
    func bytes(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        throw URLError(.unsupportedURL)
    }
}
#endif
