import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A streamed response with the session's HTTP cache: the head of an attempt the cache knows of
/// (`TransportExchange+Stream.swift` does the rest).
///
/// A `304` to the cache's own validation is not streamed: it is collected like an error
/// response, and its delivery turns it into the stored response, updated, whose body the
/// stream then gets whole (as a fresh hit's). A response the cache stores gets a
/// ``StreamCacheTee`` once it streams: each part the consumer's buffer takes is copied, up to
/// the tee's limit, and the copy is stored when the body has ended.
extension TransportExchange {
    /// The head of a streamed response to an attempt that `cache` knows of.
    func streamReceivedHead(
        _ head: HTTPResponseHead, sink: StreamSink, task: any ExchangeTask, cache: AttemptCacheState
    ) -> EventLoopFuture<Void> {
        if cache.validation != nil, head.status == .notModified {
            armIdleTimer(task)
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let started = streamReceivedHead(head, sink: sink, task: task)
        if current.isStreaming, let stage = parts.cache {
            let tee = stage.tee(for: head, of: current.request, requestHeaders: cache.requestHeaders, sentAt: cache.sentAt)
            current.stream?.cacheTee = tee
        }
        return started
    }

    /// `taken`, the future of a body part just taken, held too until `spool` (the cache's copy,
    /// when the storage is behind the network) has room again: reading the connection waits for
    /// the storage, as it waits for the consumer.
    func pacedBySpool(_ spool: CacheSpool?, _ taken: EventLoopFuture<Void>, task: any ExchangeTask) -> EventLoopFuture<Void> {
        guard let spool else { return taken }
        let room = task.eventLoop.makePromise(of: Void.self)
        spool.waitForRoom { room.succeed(()) }
        return taken.and(room.futureResult).map { _ in () }
    }
}
