import NIOCore

extension Channel {
    /// Runs `body` with the channel's pipeline on the channel's event loop: at once when called
    /// there (AsyncHTTPClient's debug initializers are), after a hop otherwise. For the handlers
    /// the session's clients add to their connections; the returned future always succeeds, and
    /// a channel whose pipeline `body` could not change works as AsyncHTTPClient's own would.
    func withSyncPipeline(_ body: @escaping @Sendable (ChannelPipeline.SynchronousOperations) -> Void) -> EventLoopFuture<Void> {
        if eventLoop.inEventLoop {
            body(pipeline.syncOperations)
            return eventLoop.makeSucceededVoidFuture()
        }
        return eventLoop.submit { body(self.pipeline.syncOperations) }
    }
}
