#if canImport(CNIOExtrasZlib)
import CNIOExtrasZlib
#endif

/// One-shot compression of small response bodies into standard `gzip` (RFC 1952) or
/// zlib-wrapped `deflate` (RFC 1950/1951) streams.
///
/// Uses the zlib copy vendored by swift-nio-extras (`CNIOExtrasZlib`, reachable through the
/// `NIOHTTPCompression` dependency) when it can be imported; otherwise falls back to a tiny
/// encoder that emits valid but uncompressed (stored-block) deflate data.
enum BodyCompressor {
    /// The output container format.
    enum Format {
        /// RFC 1952 gzip member.
        case gzip
        /// RFC 1950 zlib stream (what HTTP calls `deflate`).
        case zlib
    }

    /// Compresses `input` in one go.
    static func compress(_ input: [UInt8], format: Format) -> [UInt8] {
        #if canImport(CNIOExtrasZlib)
        return self.zlibCompress(input, format: format)
        #else
        return self.storedCompress(input, format: format)
        #endif
    }

    #if canImport(CNIOExtrasZlib)
    private static func zlibCompress(_ input: [UInt8], format: Format) -> [UInt8] {
        // zlib keeps a back pointer to the stream, so it needs a stable address.
        let stream = UnsafeMutablePointer<cnioextras_z_stream>.allocate(capacity: 1)
        stream.initialize(to: cnioextras_z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        let windowBits: Int32 = format == .gzip ? 16 + 15 : 15
        let initResult = CNIOExtrasZlib_deflateInit2(
            stream,
            CNIOEXTRAS_Z_DEFAULT_COMPRESSION,
            CNIOEXTRAS_Z_DEFLATED,
            windowBits,
            8,
            CNIOEXTRAS_Z_DEFAULT_STRATEGY
        )
        precondition(initResult == CNIOEXTRAS_Z_OK, "deflateInit2 failed: \(initResult)")
        defer { _ = cnioextras_z_deflateEnd(stream) }

        // deflateBound covers the zlib wrapper; add room for the larger gzip header/trailer.
        let capacity = Int(cnioextras_z_deflateBound(stream, UInt(input.count))) + 32
        var output = [UInt8](repeating: 0, count: capacity)
        var input = input
        let produced = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.pointee.next_in = inBuffer.baseAddress
                stream.pointee.avail_in = UInt32(inBuffer.count)
                stream.pointee.next_out = outBuffer.baseAddress
                stream.pointee.avail_out = UInt32(outBuffer.count)
                let result = cnioextras_z_deflate(stream, CNIOEXTRAS_Z_FINISH)
                precondition(result == CNIOEXTRAS_Z_STREAM_END, "deflate did not finish: \(result)")
                return outBuffer.count - Int(stream.pointee.avail_out)
            }
        }
        output.removeSubrange(produced...)
        return output
    }
    #endif

    /// Encodes `input` as deflate *stored* blocks wrapped in the requested container.
    /// Always available; used when zlib cannot be imported.
    static func storedCompress(_ input: [UInt8], format: Format) -> [UInt8] {
        var out: [UInt8] = []
        switch format {
        case .gzip:
            // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=unknown
            out += [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]
        case .zlib:
            // CMF: deflate, 32K window; FLG chosen so that (CMF << 8 | FLG) % 31 == 0.
            out += [0x78, 0x01]
        }

        var offset = 0
        repeat {
            let length = min(65_535, input.count - offset)
            let isFinal = offset + length == input.count
            out.append(isFinal ? 0x01 : 0x00)  // BFINAL, BTYPE=00 (stored), padding
            out.append(UInt8(truncatingIfNeeded: length))
            out.append(UInt8(truncatingIfNeeded: length >> 8))
            out.append(UInt8(truncatingIfNeeded: ~length))
            out.append(UInt8(truncatingIfNeeded: ~length >> 8))
            out += input[offset..<(offset + length)]
            offset += length
        } while offset < input.count

        switch format {
        case .gzip:
            let crc = self.crc32(input)
            let size = UInt32(truncatingIfNeeded: input.count)
            for shift in stride(from: 0, through: 24, by: 8) {
                out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift)))
            }
            for shift in stride(from: 0, through: 24, by: 8) {
                out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift)))
            }
        case .zlib:
            let adler = self.adler32(input)
            for shift in stride(from: 24, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: adler >> UInt32(shift)))
            }
        }
        return out
    }

    /// CRC-32 (IEEE 802.3, reflected, as used by gzip).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }

    /// Adler-32 checksum (as used by the zlib format).
    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return (b << 16) | a
    }
}
