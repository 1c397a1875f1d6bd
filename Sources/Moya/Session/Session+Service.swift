import Foundation
import ServiceLifecycle

extension Session: Service {
    /// Runs the session as a service of a `ServiceGroup` (swift-service-lifecycle): it returns
    /// once the group shuts down, and the session with it.
    ///
    /// Add the session to the group of a server that makes requests while it handles its own,
    /// and its connections close in step with the server:
    ///
    /// ```swift
    /// import Logging
    /// import ServiceLifecycle
    ///
    /// /// Runs the server that `makeServer` builds around a provider its handlers use.
    /// func serve(logger: Logger, makeServer: (MoyaProvider<GitHub>) -> any Service) async throws {
    ///     let session = Session(configuration: .init(shutdownGracePeriod: 10))
    ///     let server = makeServer(MoyaProvider<GitHub>(session: session))
    ///     let group = ServiceGroup(services: [server, session], gracefulShutdownSignals: [.sigterm], logger: logger)
    ///     try await group.run()
    /// }
    /// ```
    ///
    /// Until the group shuts down, `run()` waits and the session works as usual. On a graceful
    /// shutdown (a signal such as `SIGTERM`, or `ServiceGroup.triggerGracefulShutdown()`):
    ///
    /// 1. the session takes no new requests: they fail at once with
    ///    ``SessionError/shuttingDown``;
    /// 2. the requests already running may finish, for ``Configuration/shutdownGracePeriod`` at
    ///    most (a streamed response until its whole body has arrived);
    /// 3. those still running when that period ends are stopped, and fail with
    ///    ``SessionError/stoppedByShutdown``;
    /// 4. the session shuts down, as ``shutdown()`` does, and `run()` returns. Later requests
    ///    fail with ``SessionError/shutDown``.
    ///
    /// When the task running the session is cancelled instead (the group was cancelled, or its
    /// `maximumGracefulShutdownDuration` ran out), the session refuses new requests, stops the
    /// running ones and shuts down at once. A session run outside a `ServiceGroup` waits until
    /// its task is cancelled.
    ///
    /// A redirect that the session follows, or a Basic challenge it answers, during the grace
    /// period belongs to its running request; a retry decided by an interceptor (such as
    /// ``RetryPolicy``) sends the request again, and is refused. Stubbed requests never reach
    /// the session and are not affected.
    ///
    /// The shared ``default`` session is never shut down, since every provider created without a
    /// session of its own uses it: its `run()` waits for the group's shutdown (or cancellation)
    /// and returns, and the session goes on taking requests.
    ///
    /// - Throws: The error of ``shutdown()``, if shutting the connections down failed.
    public func run() async throws {
        // Either way, the group is ending: a graceful shutdown, or a cancellation.
        let isGraceful = (try? await gracefulShutdown()) != nil
        guard !parts.inFlight.isShared else { return }
        parts.inFlight.lifecycle.close(.draining)
        if isGraceful, !_Concurrency.Task.isCancelled {
            _ = await parts.inFlight.lifecycle.waitUntilDrained(gracePeriod: configuration.shutdownGracePeriod)
        }
        // From here, a request that the shutdown cancels fails with `stoppedByShutdown`.
        parts.inFlight.lifecycle.close(.stopping)
        defer { parts.inFlight.lifecycle.close(.stopped) }
        try await shutdown()
    }
}
