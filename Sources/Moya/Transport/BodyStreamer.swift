import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix

/// Streams a ``StreamedBody`` into an AsyncHTTPClient request: one chunk is read on NIO's
/// thread pool, written, and only when the write completes is the next chunk read. Memory use is
/// one chunk, whatever the size of the body.
enum BodyStreamer {
    /// The size of one chunk.
    static let chunkSize = 256 * 1024

    /// The AsyncHTTPClient body for `body`, with its `Content-Length`.
    static func clientBody(for body: StreamedBody, eventLoop: any EventLoop) -> HTTPClient.Body {
        .stream(contentLength: Int64(body.length)) { writer in
            let reader = BodyReader(body: body)
            let promise = eventLoop.makePromise(of: Void.self)
            pump(reader, into: writer, on: eventLoop, promise: promise)
            return promise.futureResult.always { _ in
                reader.close()
            }
        }
    }

    private static func pump(_ reader: BodyReader, into writer: HTTPClient.Body.StreamWriter, on eventLoop: any EventLoop, promise: EventLoopPromise<Void>) {
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            try reader.read(maxLength: chunkSize)
        }.whenComplete { result in
            switch result {
            case .failure(let error):
                promise.fail(error)
            case .success(nil):
                promise.succeed(())
            case .success(let chunk?):
                writer.write(.byteBuffer(ByteBuffer(data: chunk))).whenComplete { written in
                    switch written {
                    case .success: pump(reader, into: writer, on: eventLoop, promise: promise)
                    case .failure(let error): promise.fail(error)
                    }
                }
            }
        }
    }
}
