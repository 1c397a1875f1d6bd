import CMoyaZlib
import NIOCore

/// permessage-deflate (RFC 7692) for one connection, on its event loop: each message the client
/// sends is compressed with raw deflate and a sync flush whose last four bytes are dropped; each
/// compressed message it receives gets them back and is inflated, never to more than the
/// connection's message limit.
///
/// Not `Sendable`: zlib's streams belong to the connection's event loop.
final class PerMessageDeflate {
    /// The four bytes a sync flush ends with, which the sender drops (section 7.2.1).
    private static let flushTail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// The inflated message was over the limit.
    struct TooBig: Error {}
    /// The data does not inflate, or zlib failed.
    struct Failure: Error {
        /// zlib's return code.
        let code: Int32
    }

    private let agreement: PerMessageDeflateAgreement
    // zlib needs its streams at fixed addresses: allocated once, freed in deinit.
    private let compressor: UnsafeMutablePointer<z_stream>
    private let decompressor: UnsafeMutablePointer<z_stream>

    /// Streams for the parameters the server agreed to.
    ///
    /// - Throws: ``Failure`` when zlib cannot allocate a stream.
    init(agreement: PerMessageDeflateAgreement) throws {
        self.agreement = agreement
        compressor = .allocate(capacity: 1)
        compressor.initialize(to: z_stream())
        decompressor = .allocate(capacity: 1)
        decompressor.initialize(to: z_stream())
        let deflateStatus = CMoyaZlib_deflateInitRaw(compressor, 6, Int32(agreement.clientMaxWindowBits), 8)
        // Inflating with the largest window reads anything a smaller one wrote.
        let inflateStatus = CMoyaZlib_inflateInitRaw(decompressor, 15)
        guard deflateStatus == Z_OK, inflateStatus == Z_OK else {
            if deflateStatus == Z_OK { deflateEnd(compressor) }
            if inflateStatus == Z_OK { inflateEnd(decompressor) }
            compressor.deallocate()
            decompressor.deallocate()
            throw Failure(code: deflateStatus == Z_OK ? inflateStatus : deflateStatus)
        }
    }

    deinit {
        deflateEnd(compressor)
        inflateEnd(decompressor)
        compressor.deinitialize(count: 1)
        compressor.deallocate()
        decompressor.deinitialize(count: 1)
        decompressor.deallocate()
    }

    /// Compresses a message's payload.
    func compress(_ payload: ByteBuffer, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        guard payload.readableBytes > 0 else {
            // An empty message: an empty stored block without its length, which the receiver's
            // appended tail completes (section 7.2.3.6). The stream is byte-aligned after the
            // previous message's sync flush, so this needs no call to zlib.
            var output = allocator.buffer(capacity: 1)
            output.writeInteger(UInt8(0))
            return output
        }
        var output = allocator.buffer(capacity: Int(deflateBound(compressor, UInt(payload.readableBytes))) + 8)
        var status: Int32 = Z_OK
        try payload.withUnsafeReadableBytes { input in
            compressor.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: UInt8.self).baseAddress!)
            compressor.pointee.avail_in = UInt32(input.count)
            defer { compressor.pointee.next_in = nil }
            // A sync flush is done when zlib leaves room in the output: all the input taken and
            // flushed.
            while true {
                if output.writableBytes < 64 { output.reserveCapacity(minimumWritableBytes: max(1024, output.readableBytes)) }
                _ = output.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { space -> Int in
                    compressor.pointee.next_out = space.bindMemory(to: UInt8.self).baseAddress!
                    compressor.pointee.avail_out = UInt32(space.count)
                    status = deflate(compressor, Z_SYNC_FLUSH)
                    return space.count - Int(compressor.pointee.avail_out)
                }
                guard status == Z_OK || status == Z_BUF_ERROR else { throw Failure(code: status) }
                if compressor.pointee.avail_out > 0 { break }
            }
        }
        if output.readableBytes >= 4, output.readableBytesView.suffix(4).elementsEqual(Self.flushTail) {
            output.moveWriterIndex(to: output.writerIndex - 4)
        }
        if agreement.clientNoContextTakeover {
            deflateReset(compressor)
        }
        return output
    }

    /// Inflates a received message's payload, to at most `limit` bytes.
    ///
    /// - Throws: ``TooBig`` past `limit`, ``Failure`` for data that does not inflate.
    func decompress(_ payload: ByteBuffer, limit: Int, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        var output = allocator.buffer(capacity: min(limit + 1, max(4096, payload.readableBytes * 4)))
        try decompress(part: payload, into: &output, limit: limit, isFinal: true)
        return output
    }

    /// Inflates a part of a received message's payload (a fragment's) onto `output`, which must
    /// stay at most `limit` bytes: a message can be inflated, and its text checked, fragment by
    /// fragment as they arrive. `isFinal` for the message's last part, which gets the flush's
    /// four bytes back.
    ///
    /// - Throws: ``TooBig`` past `limit`, ``Failure`` for data that does not inflate.
    func decompress(part: ByteBuffer, into output: inout ByteBuffer, limit: Int, isFinal: Bool) throws {
        var input = part
        if isFinal { input.writeBytes(Self.flushTail) }
        guard input.readableBytes > 0 else { return }
        var status: Int32 = Z_OK
        try input.withUnsafeReadableBytes { bytes in
            decompressor.pointee.next_in = UnsafeMutablePointer(mutating: bytes.bindMemory(to: UInt8.self).baseAddress!)
            decompressor.pointee.avail_in = UInt32(bytes.count)
            defer { decompressor.pointee.next_in = nil }
            while true {
                // Room for one byte past the limit tells a message over it.
                if output.writableBytes == 0 {
                    guard output.readableBytes <= limit else { throw TooBig() }
                    output.reserveCapacity(minimumWritableBytes: min(max(4096, output.readableBytes), limit + 1 - output.readableBytes))
                }
                let pendingBefore = decompressor.pointee.avail_in
                let produced = output.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { space -> Int in
                    decompressor.pointee.next_out = space.bindMemory(to: UInt8.self).baseAddress!
                    decompressor.pointee.avail_out = UInt32(space.count)
                    status = inflate(decompressor, Z_SYNC_FLUSH)
                    return space.count - Int(decompressor.pointee.avail_out)
                }
                if output.readableBytes > limit { throw TooBig() }
                switch status {
                case Z_STREAM_END:
                    // The server ended its deflate stream (a final block): the next message
                    // starts a new one.
                    inflateReset(decompressor)
                    return
                case Z_OK, Z_BUF_ERROR:
                    // Done when all the input is taken and zlib had room to spare.
                    if decompressor.pointee.avail_in == 0, decompressor.pointee.avail_out > 0 { return }
                    if status == Z_BUF_ERROR, decompressor.pointee.avail_out > 0 { return }
                    // No progress either way: the data is not a deflate stream zlib can go on with.
                    if produced == 0, decompressor.pointee.avail_in == pendingBefore, decompressor.pointee.avail_out > 0 {
                        throw Failure(code: status)
                    }
                default:
                    throw Failure(code: status)
                }
            }
        }
        if isFinal, agreement.serverNoContextTakeover {
            inflateReset(decompressor)
        }
    }
}
