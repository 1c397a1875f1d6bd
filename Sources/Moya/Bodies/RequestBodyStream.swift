import Foundation

/// A request body read from an asynchronous sequence of byte chunks and sent while it is
/// produced, never gathered in memory.
///
/// Make one from any `AsyncSequence` whose elements are bytes (`[UInt8]`, `ArraySlice<UInt8>`,
/// `Data`, or any other `DataProtocol`) and send it with ``MoyaProvider/request(_:body:)`` or
/// ``MoyaProvider/stream(_:body:options:)``:
///
/// ```swift
/// let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
/// let body = RequestBodyStream(chunks)
/// _Concurrency.Task {
///     continuation.yield(Array("first line\n".utf8))
///     continuation.yield(Array("second line\n".utf8))
///     continuation.finish()
/// }
/// let response = try await provider.request(.zen, body: body)
/// ```
///
/// The next chunk is asked for only once the connection has taken the previous one, so a
/// producer goes no faster than the network. With a ``length`` the request carries it as its
/// `Content-Length`, and a sequence that produces more or fewer bytes fails the request with
/// ``FileTransferError/lengthMismatch(expected:actual:)``; without one the body is sent with
/// chunked transfer encoding on HTTP/1.1 (on HTTP/2, in frames as it comes). A sequence that
/// throws fails the request with ``FileTransferError/readFailed(_:underlying:)``, its error as
/// the cause. Cancelling the task that sent the request, or the request itself, stops reading the
/// sequence: the task that iterates it is cancelled and the iterator released.
///
/// A body that can be iterated once only (``Iteration/single``, the default) cannot be sent
/// twice: a redirect that keeps the body (`307`, `308`) and an interceptor's retry fail the
/// request with ``NonReplayableBodyError``, and so does sending the same body in a second request.
/// Say ``Iteration/multiple`` when every iteration produces the same bytes anew, and those
/// follow-ups send it again.
public struct RequestBodyStream: Sendable {
    /// How many times the sequence may be iterated.
    public enum Iteration: Sendable, Equatable {
        /// Once: the body is sent once, and a follow-up that needs it again fails with
        /// ``NonReplayableBodyError``.
        case single
        /// Any number of times, each iteration producing the same bytes: redirects and retries
        /// send the body again.
        case multiple
    }

    /// The number of bytes the sequence produces, sent as the `Content-Length`; `nil` when it
    /// is not known in advance.
    public let length: Int64?

    /// How many times the sequence may be iterated.
    public let iteration: Iteration

    /// A new reader of the sequence, for one upload.
    let makeReader: @Sendable () -> BodyChunkReader

    /// For a body iterated once only, whether it was: shared by every request and attempt that
    /// would send it.
    let claim: OneShotClaim?

    /// A body made of the chunks of `chunks`.
    ///
    /// - Parameters:
    ///   - chunks:    The body, in chunks of any size; empty chunks are skipped.
    ///   - length:    The number of bytes `chunks` produces, when known; it must not be
    ///                negative.
    ///   - iteration: Whether `chunks` may be iterated more than once, producing the same bytes
    ///                each time.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64? = nil, iteration: Iteration = .single)
    where Chunks.Element: DataProtocol {
        precondition((length ?? 0) >= 0, "A body's length cannot be negative")
        self.length = length
        self.iteration = iteration
        self.makeReader = { BodyChunkReader(chunks) }
        self.claim = iteration == .single ? OneShotClaim() : nil
    }

    /// Whether the body can be sent more than once.
    var isReplayable: Bool { iteration == .multiple }
}
