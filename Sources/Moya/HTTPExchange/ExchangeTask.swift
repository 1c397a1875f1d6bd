import AsyncHTTPClient
import NIOCore

/// What an exchange's delegate code needs of the attempt it serves: the event loop it runs on,
/// and a way to fail the attempt (a timer that fired). An AsyncHTTPClient task, or a
/// ``DuplexAttempt`` (a stream with a streamed body, on AsyncHTTPClient's async API).
protocol ExchangeTask: AnyObject, Sendable {
    /// The loop the attempt's delegate code runs on, one call at a time.
    var eventLoop: any EventLoop { get }

    /// Fails the attempt with `error`. Does nothing once it has ended.
    func fail(reason error: any Error)
}

extension HTTPClient.Task: ExchangeTask {}
