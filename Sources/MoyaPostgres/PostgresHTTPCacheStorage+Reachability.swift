import Dispatch
import Foundation
import Moya
import NIOCore
import NIOPosix
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// The server a storage made from a ``Configuration-swift.struct`` connects to, which it
    /// checks is reachable when it does not know.
    ///
    /// A `PostgresClient` whose server refuses connections keeps a query waiting, retrying in
    /// the background, until the query's time limit: the client never says the server is gone.
    /// The storage therefore opens a TCP connection of its own (and closes it at once, before
    /// any byte is sent) when it does not know the server answers (its first call, after a call
    /// failed for want of a connection), and when a call has waited longer than
    /// ``Server/suspicion`` (and again after twice as long each time while it waits, up to
    /// ``Server/reuse``): a refused connection, an unknown host or an unreachable network then
    /// fails the call within a fraction of a second, not after ``operationTimeout``.
    struct Server: Sendable {
        let host: String
        let port: Int
        /// The longest the check waits for the connection.
        let connectTimeout: TimeInterval

        /// How long a call waits before the storage checks the server is still reachable.
        static let suspicion: TimeInterval = 0.05
        /// How long a check that found the server reachable is reused (a slow database is not
        /// checked for every slow call: at most four checks a second), and the longest a waiting
        /// call goes between two checks.
        static let reuse: TimeInterval = 0.25
    }

    /// What the storage knows of its server.
    enum Reachability: Sendable {
        /// Not yet known: nothing has answered.
        case unknown
        /// A call was answered since the last failure for want of a connection.
        case answered
        /// A call failed for want of a connection, or timed out.
        case failing
    }

    /// The server could not be reached: a connection to it was refused, or could not be made.
    struct Unreachable: Error {
        let host: String
        let port: Int
        let reason: String
    }

    /// `nil` when the server is reachable (or when the storage does not know its server: the
    /// application's client), the reason otherwise. One check at a time: callers that ask while
    /// one runs share it, and a success is reused for ``Server/reuse``.
    func checkReachable() async -> Unreachable? {
        guard let server else { return nil }
        let now = DispatchTime.now().uptimeNanoseconds
        let check: _Concurrency.Task<Unreachable?, Never>? = state.withLock { state in
            if let reachable = state.reachableAt, now - min(now, reachable) < UInt64(Server.reuse * 1e9) { return nil }
            if let running = state.reachabilityCheck { return running }
            let task = _Concurrency.Task { await Self.connect(to: server) }
            state.reachabilityCheck = task
            return task
        }
        guard let check else { return nil }
        let result = await check.value
        state.withLock { state in
            if state.reachabilityCheck == check { state.reachabilityCheck = nil }
            if result == nil {
                state.reachableAt = DispatchTime.now().uptimeNanoseconds
            } else {
                state.reachableAt = nil
                state.reachability = .failing
            }
        }
        return result
    }

    /// Whether the storage checks the server before a call: it has not answered since the last
    /// failure for want of a connection, or ever.
    var checksBeforeCall: Bool {
        server != nil && state.withLock { $0.reachability != .answered }
    }

    /// Records that a call was answered, or failed for want of a connection (`error`).
    func recordReachability(failure error: (any Error)?) {
        let failing = error.map(Self.isConnectionFailure) ?? false
        state.withLock { state in
            if error == nil {
                state.reachability = .answered
            } else if failing {
                state.reachability = .failing
                state.reachableAt = nil
            }
        }
    }

    /// Whether `error` says nothing answered: a timeout, a connection refused or lost; not an
    /// error the server sent (the connection works), a cancel or the cache's own.
    static func isConnectionFailure(_ error: any Error) -> Bool {
        switch error {
        case is Deadline.Exceeded, is Unreachable:
            return true
        case is CancellationError, is HTTPCacheStorageError, is PostgresDecodingError:
            return false
        case let error as PostgresTransactionError:
            guard let inner = error.closureError ?? error.beginError ?? error.commitError else { return false }
            return isConnectionFailure(inner)
        case let error as PSQLError:
            return error.serverInfo == nil
        default:
            return true
        }
    }

    /// Opens a TCP connection to `server` and closes it before sending anything (PostgreSQL
    /// logs nothing for such a connection); the reason when it cannot.
    private static func connect(to server: Server) async -> Unreachable? {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.milliseconds(Int64(max(server.connectTimeout, 0.001) * 1000)))
                .connect(host: server.host, port: server.port).get()
            try? await channel.close().get()
            return nil
        } catch {
            return Unreachable(host: server.host, port: server.port, reason: describeConnectionFailure(error))
        }
    }

    /// A short reason for a failed connection: "connection refused", "timed out after 5 s".
    private static func describeConnectionFailure(_ error: any Error) -> String {
        switch error {
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return describeConnectionFailure(first.error) }
            if let dns = error.dnsAAAAError ?? error.dnsAError { return "its name could not be resolved (\(dns))" }
            return "no address to connect to"
        case let error as IOError:
            return String(cString: strerror(error.errnoCode)).lowercased()
        case let error as ChannelError:
            if case .connectTimeout(let timeout) = error { return "no answer within \(Double(timeout.nanoseconds) / 1e9) s" }
            return "\(error)"
        default:
            return "\(error)"
        }
    }
}
